// Text and JSON of the per-process split (process_text.h).
#include "report/process_text.h"

#include <fmt/format.h>

namespace wattlab::report {
namespace {

using Json = nlohmann::ordered_json;

std::string labels_of(const ProcessRow& r) {
  std::string s;
  if (!r.ids.pod_uid.empty()) s += "  pod " + r.ids.pod_uid;
  if (!r.ids.container_id.empty()) s += "  container " + r.ids.container_id.substr(0, 12);
  if (!r.ids.slurm_job_id.empty()) s += "  slurm job " + r.ids.slurm_job_id;
  return s;
}

// One line: a label in a fixed column, then energy ± uncertainty and what follows.
void line(std::ostream& out, const std::string& label, double e, double u, const std::string& rest) {
  out << fmt::format("  {:<34} {:12.3f} J ± {:.3f} J{}\n", label, e, u, rest);
}

void print_rows(std::ostream& out, const GpuAttribution& a, bool tree, const std::string& indent) {
  for (const auto& r : a.rows) {
    if (r.in_tree != tree) continue;
    line(out, fmt::format("{}pid {} {}", indent, r.pid, r.comm.empty() ? "(gone)" : r.comm), r.share.energy_j,
         r.share.uncertainty_j, fmt::format("   SM {:.2f} s{}", r.share.sm_s, labels_of(r)));
  }
}

Json part(double e, double u) { return Json{{"energy_j", e}, {"u95_j", u}}; }

}  // namespace

void print_process_split(std::ostream& out, const std::vector<GpuAttribution>& gpus) {
  if (gpus.empty()) return;
  out << "energy per process (a model: " << ProcessSplit::kModel
      << "; ± is the 95 % uncertainty, each share's wider than the total's; checked on an H100: right for one "
         "process, indicative only for processes sharing the GPU: docs/per-process.md)\n";
  for (const auto& a : gpus) {
    const ProcessSplit& s = a.split;
    out << fmt::format("{}  total {:.3f} J ± {:.3f} J, polls cover {:.1f} % of the window\n", a.gpu_id,
                       s.total_energy_j, s.total_uncertainty_j, s.coverage * 100);
    if (s.idle_known)
      line(out, "idle", s.idle_energy_j, s.idle_uncertainty_j, "   (" + s.idle_source + ")");
    else
      out << "  idle            unknown (included in the shares below)\n";
    if (a.tree || a.others) {
      const ProcessShare none{};
      const ProcessShare& t = a.tree ? *a.tree : none;
      const ProcessShare& o = a.others ? *a.others : none;
      line(out, "the command's process tree", t.energy_j, t.uncertainty_j, "");
      print_rows(out, a, true, "  ");
      line(out, "other tenants", o.energy_j, o.uncertainty_j, "");
      print_rows(out, a, false, "  ");
    } else {
      print_rows(out, a, false, "");
      print_rows(out, a, true, "");
    }
    line(out, "unattributed", s.unattributed_energy_j, s.unattributed_uncertainty_j,
         fmt::format("   (busy time no listed process accounts for: {:.1f} %)", s.unattributed_busy_share * 100));
    for (const auto& n : s.notes) out << "  note: " << n << "\n";
  }
}

Json process_split_to_json(const std::vector<GpuAttribution>& gpus) {
  Json arr = Json::array();
  for (const auto& a : gpus) {
    const ProcessSplit& s = a.split;
    Json procs = Json::array();
    for (const auto& r : a.rows)
      procs.push_back(Json{{"pid", r.pid},
                           {"comm", r.comm},
                           {"in_command_tree", r.in_tree},
                           {"container_id", r.ids.container_id},
                           {"pod_uid", r.ids.pod_uid},
                           {"slurm_job_id", r.ids.slurm_job_id},
                           {"sm_s", r.share.sm_s},
                           {"energy_j", r.share.energy_j},
                           {"u95_j", r.share.uncertainty_j}});
    Json idle = s.idle_known ? Json{{"known", true}, {"energy_j", s.idle_energy_j}, {"u95_j", s.idle_uncertainty_j},
                                    {"source", s.idle_source}}
                             : Json{{"known", false}};
    arr.push_back(Json{{"gpu", a.gpu_id},
                       {"model", ProcessSplit::kModel},
                       {"total", part(s.total_energy_j, s.total_uncertainty_j)},
                       {"idle", std::move(idle)},
                       {"active_j", s.active_energy_j},
                       {"coverage", s.coverage},
                       {"command_tree", a.tree ? part(a.tree->energy_j, a.tree->uncertainty_j) : Json(nullptr)},
                       {"other_tenants", a.others ? part(a.others->energy_j, a.others->uncertainty_j) : Json(nullptr)},
                       {"unattributed", Json{{"energy_j", s.unattributed_energy_j},
                                             {"u95_j", s.unattributed_uncertainty_j},
                                             {"busy_share", s.unattributed_busy_share}}},
                       {"processes", std::move(procs)},
                       {"notes", s.notes}});
  }
  return arr;
}

}  // namespace wattlab::report
