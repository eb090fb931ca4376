// Process labels from /proc (proc_info.h): comm, the parent from stat, ids from the cgroup path and
// SLURM_JOB_ID from environ.
#include "sensors/proc_info.h"

#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <system_error>

namespace wattlab {
namespace {

std::optional<std::string> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return std::nullopt;
  return s;
}

// Field 4 of /proc/<pid>/stat, after the command name in parentheses (which may hold spaces and ')').
std::optional<unsigned> parent_of(unsigned pid, const std::filesystem::path& root) {
  auto stat = slurp(root / std::to_string(pid) / "stat");
  if (!stat) return std::nullopt;
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(stat->substr(close + 1));
  std::string state;
  unsigned long ppid = 0;
  if (!(in >> state >> ppid)) return std::nullopt;
  return static_cast<unsigned>(ppid);
}

}  // namespace

CgroupIds parse_cgroup_path(std::string_view path) {
  static const std::regex pod(
      R"(pod([0-9a-fA-F]{8})[-_]([0-9a-fA-F]{4})[-_]([0-9a-fA-F]{4})[-_]([0-9a-fA-F]{4})[-_]([0-9a-fA-F]{12}))");
  static const std::regex container(R"((?:^|[-:])([0-9a-f]{64})(?:\.scope)?$)");
  static const std::regex job(R"(^job_([0-9]+)$)");
  CgroupIds ids;
  std::string s(path);
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t slash = s.find('/', start);
    if (slash == std::string::npos) slash = s.size();
    const std::string part = s.substr(start, slash - start);
    std::smatch m;
    if (std::regex_search(part, m, pod))
      ids.pod_uid = m[1].str() + "-" + m[2].str() + "-" + m[3].str() + "-" + m[4].str() + "-" + m[5].str();
    if (std::regex_search(part, m, container)) ids.container_id = m[1].str();  // the innermost wins
    if (std::regex_match(part, m, job)) ids.slurm_job_id = m[1].str();
    start = slash + 1;
  }
  return ids;
}

std::optional<ProcInfo> read_proc_info(unsigned pid, const std::filesystem::path& proc_root) {
  const auto dir = proc_root / std::to_string(pid);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  ProcInfo info;
  info.pid = pid;
  if (auto comm = slurp(dir / "comm")) {
    while (!comm->empty() && (comm->back() == '\n' || comm->back() == '\0')) comm->pop_back();
    info.comm = *comm;
  }
  info.ppid = parent_of(pid, proc_root).value_or(0);
  if (auto cg = slurp(dir / "cgroup")) {
    std::istringstream in(*cg);
    std::string line, first;
    while (std::getline(in, line)) {
      // hierarchy-id:controllers:path; the unified hierarchy is "0::path".
      const auto a = line.find(':');
      const auto b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string p = line.substr(b + 1);
      if (first.empty()) first = p;
      if (line.rfind("0::", 0) == 0) info.cgroup = p;
    }
    if (info.cgroup.empty()) info.cgroup = first;
    info.ids = parse_cgroup_path(info.cgroup);
  }
  if (auto env = slurp(dir / "environ")) {
    static const std::string key = "SLURM_JOB_ID=";
    std::size_t start = 0;
    while (start < env->size()) {
      std::size_t end = env->find('\0', start);
      if (end == std::string::npos) end = env->size();
      if (env->compare(start, key.size(), key) == 0) info.ids.slurm_job_id = env->substr(start + key.size(), end - start - key.size());
      start = end + 1;
    }
  }
  return info;
}

bool descends_from(unsigned pid, unsigned ancestor, const std::filesystem::path& proc_root) {
  for (int depth = 0; depth < 4096 && pid > 0; ++depth) {  // bounded: a pid reused mid-walk cannot loop us
    if (pid == ancestor) return true;
    auto parent = parent_of(pid, proc_root);
    if (!parent || *parent == pid) return false;
    pid = *parent;
  }
  return false;
}

}  // namespace wattlab
