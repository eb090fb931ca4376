#include "diagnose/rules.h"

#include "test_data.h"
#include "diagnose/select.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

namespace {
const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.rule_id == id) return &f;
  return nullptr;
}
}  // namespace

TEST(Rules, UnderutilizedAtSmallBatch) {
  const Rows rows = rows_of(chat());
  const auto& r = resolve(parse_selector("model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100,gpus=1,batch=8"), rows);
  const auto fs = diagnose_record(r, rows);
  const auto* f = find(fs, "gpu_underutilized");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(format_path(f->path), "Batch size → GPU utilization → Energy");
  EXPECT_NE(f->summary.find("0.4548 J at batch 8 -> 0.07019 J at batch 512"), std::string::npos) << f->summary;
  EXPECT_NEAR(f->evidence[0].value, 486.438 / 700 * 100, 0.01);
  // At the minimum-energy batch the GPU is busy: no underutilization.
  const auto& m = resolve(parse_selector("model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100,gpus=1,batch=512"), rows);
  EXPECT_EQ(find(diagnose_record(m, rows), "gpu_underutilized"), nullptr);
}

TEST(Rules, MemoryLimitedBatchAndParallelismOverhead) {
  const Rows rows = rows_of(gpqa());
  const auto& r = resolve(parse_selector("model=openai/gpt-oss-120b,gpu=H100,gpus=1,batch=64"), rows);
  const auto fs = diagnose_record(r, rows);
  const auto* f = find(fs, "memory_limited_batch");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("H100x2 reaches batch 2048"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("(-68%)"), std::string::npos) << f->summary;
  const auto& two = resolve(parse_selector("model=openai/gpt-oss-120b,gpu=H100,gpus=2,batch=64"), rows);
  const auto fs1 = diagnose_record(two, rows);
  const auto* p = find(fs1, "parallelism_overhead");
  ASSERT_NE(p, nullptr);
  EXPECT_GT(p->evidence[0].value, p->evidence[1].value);
}

TEST(Rules, ComputeVolumeAndFp8) {
  const Rows rows = rows_of(gpqa());
  const auto& r = resolve(parse_selector("model=gpt-oss-20b,gpu=B200,gpus=1,pick=min-energy"), rows);
  const auto fs2 = diagnose_record(r, rows);
  const auto* f = find(fs2, "compute_volume");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("output length"), std::string::npos);
  Rows chat_rows = rows_of(chat());
  const auto& fp8 = resolve(parse_selector("model=Qwen/Qwen3-235B-A22B-Instruct-2507-FP8,gpu=H100,gpus=8,batch=16"), chat_rows);
  const auto fs3 = diagnose_record(fp8, chat_rows);
  const auto* l = find(fs3, "low_arithmetic_intensity");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(format_path(l->path), "Quantization → Compute volume → GPU utilization → Energy");
  const Rows img = rows_of(images());
  const auto& hun = resolve(parse_selector("model=HunyuanDiT,gpu=B200,gpus=1,pick=min-energy"), img);
  const auto fs4 = diagnose_record(hun, img);
  const auto* v = find(fs4, "compute_volume_diffusion");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->summary.find("50 steps"), std::string::npos) << v->summary;
}

TEST(Rules, NonGpuBottleneckNeedsMeasuredEvidence) {
  // A measured curve: low utilization, low power, and energy per token that does not fall with batch.
  std::vector<ConfigRecord> recs;
  for (int b : {32, 64}) {
    ConfigRecord r;
    r.model_id = "org/m";
    r.nickname = "M";
    r.task = "t";
    r.gpu_model = "H100";
    r.num_gpus = 1;
    LlmMetrics m;
    m.max_num_seqs = b;
    m.avg_batch_size = b * 0.95;
    m.avg_output_len = 500;
    m.energy_per_token_joules = b == 32 ? 0.20 : 0.195;
    m.energy_per_request_joules = m.energy_per_token_joules * 500;
    m.output_throughput_tokens_per_sec = 1500;
    r.avg_power_watts = m.energy_per_token_joules * 1500;
    m.median_itl_ms = 20;
    r.llm = m;
    r.row_index = recs.size();
    recs.push_back(r);
  }
  Dataset d = make_dataset("store:test", "measured", "t", recs);
  Rows rows = rows_of(d);
  EXPECT_EQ(find(diagnose_record(d.rows[0], rows), "non_gpu_bottleneck"), nullptr);  // no measured evidence
  d.rows[0].measured.gpu_utilization = 0.35;
  d.rows[0].measured.cpu_utilization = 0.98;
  const auto fs5 = diagnose_record(d.rows[0], rows);
  const auto* f = find(fs5, "non_gpu_bottleneck");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(format_path(f->path), "Non-GPU bottlenecks → Batch size → GPU utilization → Energy");
  EXPECT_NE(f->summary.find("measured GPU utilization 35%"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("host CPU busy 98%"), std::string::npos);
  EXPECT_NE(f->summary.find("Host-bound"), std::string::npos) << f->summary;  // both triggers hold here
  // Host-bound: a saturated host thread and kernels idle much of the time, even while a larger batch
  // still lowers energy per token (the flat-batch evidence is absent).
  d.rows[1].llm->energy_per_token_joules = 0.1;
  const auto fs_host = diagnose_record(d.rows[0], rows);
  const auto* h = find(fs_host, "non_gpu_bottleneck");
  ASSERT_NE(h, nullptr);
  EXPECT_NE(h->summary.find("Host-bound: the host thread is saturated (>= 90% busy) while kernels run 35% of the time"),
            std::string::npos)
      << h->summary;
  d.rows[0].measured.gpu_utilization = 0.74;  // kernels run most of the time: not host-bound
  EXPECT_EQ(find(diagnose_record(d.rows[0], rows), "non_gpu_bottleneck"), nullptr);
  d.rows[0].measured.gpu_utilization = 0.35;
  d.rows[0].measured.cpu_utilization = 0.50;  // host not saturated
  EXPECT_EQ(find(diagnose_record(d.rows[0], rows), "non_gpu_bottleneck"), nullptr);
  d.rows[0].measured.cpu_utilization = 0.98;
  // Measured SM activity makes "underutilized" fire even when power alone would not.
  d.rows[1].llm->energy_per_token_joules = 0.1;
  d.rows[0].avg_power_watts = 680;  // 97% of TDP
  d.rows[0].measured = {};
  EXPECT_EQ(find(diagnose_record(d.rows[0], rows), "gpu_underutilized"), nullptr);
  d.rows[0].measured.sm_activity = 0.3;
  const auto fs6 = diagnose_record(d.rows[0], rows);
  const auto* u = find(fs6, "gpu_underutilized");
  ASSERT_NE(u, nullptr);
  EXPECT_NE(u->summary.find("measured SM activity is 30%"), std::string::npos) << u->summary;
}
