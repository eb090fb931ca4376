// What a process on the GPU is, read from /proc: its command name, parent, cgroup path and the ids
// the cgroup path and environment carry (container, Kubernetes pod, Slurm job). The /proc root is
// a parameter so tests read a tree they wrote. Reading another user's environ needs root (or the
// same user); a part that cannot be read stays empty.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace wattlab {

struct CgroupIds {
  std::string container_id;  // 64 hex digits of a docker, containerd, cri-o or podman container
  std::string pod_uid;       // a Kubernetes pod's UID, with dashes
  std::string slurm_job_id;  // the job of Slurm's cgroup plugin (.../job_<id>/...)
};

// The ids a cgroup path shows, e.g.
// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/cri-containerd-<hex>.scope.
CgroupIds parse_cgroup_path(std::string_view path);

struct ProcInfo {
  unsigned pid = 0;
  unsigned ppid = 0;
  std::string comm;    // /proc/<pid>/comm
  std::string cgroup;  // the cgroup v2 path (the "0::" line), else the first line's path
  CgroupIds ids;       // from the cgroup path; slurm_job_id from SLURM_JOB_ID in environ first
};

// std::nullopt when /proc/<pid> does not exist (the process is gone).
std::optional<ProcInfo> read_proc_info(unsigned pid, const std::filesystem::path& proc_root = "/proc");

// True when `ancestor` is `pid` or one of its ancestors (parent links read from <proc_root>/<pid>/stat).
bool descends_from(unsigned pid, unsigned ancestor, const std::filesystem::path& proc_root = "/proc");

}  // namespace wattlab
