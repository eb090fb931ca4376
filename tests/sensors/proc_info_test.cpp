// Process labels from a fake /proc: container, pod and Slurm job from cgroup paths and environ,
// and the parent walk that decides who belongs to a command's process tree.
#include "sensors/proc_info.h"

#include <gtest/gtest.h>

#include "sensors/fake_proc.h"

namespace wattlab {
namespace {

const std::string kHex = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

TEST(CgroupPath, KubernetesSystemdDriverWithContainerd) {
  const auto ids = parse_cgroup_path(
      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4e5f_8a9b_0123456789ab.slice/"
      "cri-containerd-" + kHex + ".scope");
  EXPECT_EQ(ids.pod_uid, "1a2b3c4d-0000-4e5f-8a9b-0123456789ab");
  EXPECT_EQ(ids.container_id, kHex);
  EXPECT_EQ(ids.slurm_job_id, "");
}

TEST(CgroupPath, KubernetesCgroupfsDriverCrioAndDocker) {
  auto ids = parse_cgroup_path("/kubepods/besteffort/pod1a2b3c4d-0000-4e5f-8a9b-0123456789ab/" + kHex);
  EXPECT_EQ(ids.pod_uid, "1a2b3c4d-0000-4e5f-8a9b-0123456789ab");
  EXPECT_EQ(ids.container_id, kHex);
  ids = parse_cgroup_path("/kubepods.slice/kubepods-pod1a2b3c4d_0000_4e5f_8a9b_0123456789ab.slice/crio-" + kHex + ".scope");
  EXPECT_EQ(ids.container_id, kHex);
  ids = parse_cgroup_path("/system.slice/docker-" + kHex + ".scope");
  EXPECT_EQ(ids.container_id, kHex);
  EXPECT_EQ(ids.pod_uid, "");
  ids = parse_cgroup_path("/docker/" + kHex);
  EXPECT_EQ(ids.container_id, kHex);
}

TEST(CgroupPath, SeenFromInsideAnotherCgroupNamespace) {
  const auto ids = parse_cgroup_path("/../../kubepods-besteffort.slice/kubepods-besteffort-pod1a2b3c4d_0000_4e5f_8a9b_"
                                     "0123456789ab.slice/cri-containerd-" + kHex + ".scope");
  EXPECT_EQ(ids.pod_uid, "1a2b3c4d-0000-4e5f-8a9b-0123456789ab");
  EXPECT_EQ(ids.container_id, kHex);
}

TEST(CgroupPath, SlurmJobAndPlainSessions) {
  EXPECT_EQ(parse_cgroup_path("/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0").slurm_job_id, "4711");
  EXPECT_EQ(parse_cgroup_path("/slurm/uid_1000/job_99/step_batch").slurm_job_id, "99");
  const auto none = parse_cgroup_path("/user.slice/user-1000.slice/session-3.scope");
  EXPECT_EQ(none.container_id, "");
  EXPECT_EQ(none.pod_uid, "");
  EXPECT_EQ(none.slurm_job_id, "");
  EXPECT_EQ(parse_cgroup_path("/system.slice/docker-abc.scope").container_id, "");  // too short for an id
}

TEST(ProcInfo, ReadsCommParentCgroupAndSlurmJob) {
  testing::FakeProc proc;
  proc.add(500, 1, "python3",
           "12:cpu,cpuacct:/slurm/uid_1000/job_12/step_0\n0::/system.slice/slurmstepd.scope/job_12/step_0\n",
           {"HOME=/root", "SLURM_JOB_ID=31337", "PATH=/bin"});
  const auto info = read_proc_info(500, proc.root());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->comm, "python3");
  EXPECT_EQ(info->ppid, 1u);
  EXPECT_EQ(info->cgroup, "/system.slice/slurmstepd.scope/job_12/step_0");
  EXPECT_EQ(info->ids.slurm_job_id, "31337");  // the environment wins over the cgroup path
  EXPECT_FALSE(read_proc_info(501, proc.root()));
}

TEST(ProcInfo, CgroupV1OnlyUsesTheFirstPathAndAnOddCommStillParses) {
  testing::FakeProc proc;
  proc.add(600, 42, "a) b", "11:memory:/docker/" + kHex + "\n");
  const auto info = read_proc_info(600, proc.root());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, 42u);
  EXPECT_EQ(info->ids.container_id, kHex);
}

TEST(ProcInfo, DescendsFromWalksParents) {
  testing::FakeProc proc;
  proc.add(1, 0, "init");
  proc.add(100, 1, "wattlab");
  proc.add(200, 100, "bash");
  proc.add(300, 200, "python3");
  proc.add(400, 1, "other");
  EXPECT_TRUE(descends_from(300, 100, proc.root()));
  EXPECT_TRUE(descends_from(100, 100, proc.root()));
  EXPECT_FALSE(descends_from(400, 100, proc.root()));
  EXPECT_FALSE(descends_from(999, 100, proc.root()));  // gone
}

}  // namespace
}  // namespace wattlab
