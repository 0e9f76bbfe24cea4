// IR → plan: walks the decode step in program order and emits one plan step per op.
#include "compiler/lower/plan_lowering.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/dialect/CortiqDialect.h"
#include "compiler/lower/storage_format.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace cortiq {
namespace {

std::string OpName(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " at " << op->getLoc();
  return text;
}

class Lowering {
 public:
  Lowering(mlir::ModuleOp module, const LoweringOptions& options)
      : module_(module), options_(options) {}

  absl::StatusOr<Plan> Run();

 private:
  int32_t NewBuffer(mlir::Value value) {
    int64_t n = value.getType().cast<mlir::RankedTensorType>().getNumElements();
    BufferEntry entry;
    entry.num_elements = static_cast<uint64_t>(n);
    auto planned = value.getDefiningOp()->getAttrOfType<mlir::IntegerAttr>(
        CortiqDialect::getArenaOffsetAttrName());
    if (planned_arena_ && planned) {
      entry.offset = static_cast<uint64_t>(planned.getInt());
    } else {
      // No plan-buffers: every value gets its own bytes.
      entry.offset = arena_bytes_;
      arena_bytes_ += (4 * entry.num_elements + kBufferAlignment - 1) / kBufferAlignment *
                      kBufferAlignment;
    }
    plan_.buffers.push_back(entry);
    int32_t index = static_cast<int32_t>(plan_.buffers.size() - 1);
    buffers_[value] = index;
    return index;
  }
  int32_t Buffer(mlir::Value value) { return buffers_.lookup(value); }
  int32_t Weight(mlir::FlatSymbolRefAttr symbol);
  int32_t Cache(mlir::FlatSymbolRefAttr symbol);
  absl::Status LowerOp(mlir::Operation* op, bool logits_only, StepRows rows);

  mlir::ModuleOp module_;
  const LoweringOptions& options_;
  absl::Status status_;  // the first error of Weight(), which returns an index
  Plan plan_;
  uint64_t arena_bytes_ = 0;
  bool planned_arena_ = false;  // plan-buffers ran: offsets come from the IR
  llvm::DenseMap<mlir::Value, int32_t> buffers_;
  absl::flat_hash_map<std::string, int32_t> weights_;
  absl::flat_hash_map<std::string, int32_t> caches_;
};

int32_t Lowering::Weight(mlir::FlatSymbolRefAttr symbol) {
  std::string name = symbol.getValue().str();
  auto it = weights_.find(name);
  if (it != weights_.end()) return it->second;
  auto op = mlir::SymbolTable::lookupNearestSymbolFrom<WeightOp>(module_, symbol);
  mlir::RankedTensorType type = op.getTensorType();
  WeightEntry entry;
  entry.name = name;
  entry.shape.assign(type.getShape().begin(), type.getShape().end());
  absl::StatusOr<WeightFormat> format =
      op.getStoredFormat()
          ? ToWeightFormat(*op.getStoredFormat())
          : absl::InvalidArgumentError(absl::StrCat(
                "lowering: weight '", name,
                "' has no storage format (assign-storage-formats records them)"));
  if (!format.ok() && status_.ok()) status_ = format.status();
  entry.format = format.value_or(WeightFormat::kF32);
  entry.size_bytes = WeightFormatBytes(entry.format, entry.shape);
  plan_.weights.push_back(entry);
  int32_t index = static_cast<int32_t>(plan_.weights.size() - 1);
  weights_[name] = index;
  return index;
}

int32_t Lowering::Cache(mlir::FlatSymbolRefAttr symbol) {
  std::string name = symbol.getValue().str();
  auto it = caches_.find(name);
  if (it != caches_.end()) return it->second;
  auto op = mlir::SymbolTable::lookupNearestSymbolFrom<KvCacheOp>(module_, symbol);
  CacheEntry entry;
  entry.layer = static_cast<int64_t>(op.getLayer());
  entry.sliding = op.getLayerType() == AttentionType::sliding;
  entry.num_kv_heads = static_cast<int64_t>(op.getNumKvHeads());
  entry.head_dim = static_cast<int64_t>(op.getHeadDim());
  plan_.caches.push_back(entry);
  int32_t index = static_cast<int32_t>(plan_.caches.size() - 1);
  caches_[name] = index;
  return index;
}

absl::Status Lowering::LowerOp(mlir::Operation* op, bool logits_only, StepRows rows) {
  Step step;
  step.logits_only = logits_only;
  step.rows = rows;
  auto unary = [&](StepKind kind, mlir::Value in, mlir::Value out) {
    step.kind = kind;
    step.in0 = Buffer(in);
    step.out = NewBuffer(out);
  };
  if (auto e = mlir::dyn_cast<EmbeddingOp>(op)) {
    step.kind = StepKind::kEmbedding;
    step.weight = Weight(e.getTableAttr());
    step.scale = e.getScale().convertToFloat();
    step.out = NewBuffer(e.getResult());
  } else if (auto l = mlir::dyn_cast<LinearOp>(op)) {
    unary(StepKind::kLinear, l.getInput(), l.getResult());
    step.weight = Weight(l.getWeightAttr());
  } else if (auto n = mlir::dyn_cast<RmsNormOp>(op)) {
    unary(StepKind::kRmsNorm, n.getInput(), n.getResult());
    step.weight = n.getGainAttr() ? Weight(n.getGainAttr()) : -1;
    step.group_size = static_cast<int64_t>(n.getGroupSize());
    step.eps = n.getEps().convertToFloat();
  } else if (auto r = mlir::dyn_cast<RopeOp>(op)) {
    unary(StepKind::kRope, r.getInput(), r.getResult());
    step.head_dim = static_cast<int64_t>(r.getHeadDim());
    step.rotated_pairs = static_cast<int64_t>(r.getRotatedPairs());
    step.theta = r.getTheta().convertToDouble();
  } else if (auto a = mlir::dyn_cast<KvAppendOp>(op)) {
    step.kind = StepKind::kKvAppend;
    step.in0 = Buffer(a.getKey());
    step.in1 = Buffer(a.getValue());
    step.cache = Cache(a.getCacheAttr());
  } else if (auto a = mlir::dyn_cast<AttentionOp>(op)) {
    unary(StepKind::kAttention, a.getQuery(), a.getResult());
    step.cache = Cache(a.getCacheAttr());
    step.num_heads = static_cast<int64_t>(a.getNumHeads());
    step.window = a.getWindow() ? static_cast<int64_t>(*a.getWindow()) : 0;
    step.scale = a.getScale().convertToFloat();
    CacheEntry& cache = plan_.caches[step.cache];
    if (cache.sliding) cache.window = step.window;
  } else if (auto g = mlir::dyn_cast<GeluTanhOp>(op)) {
    unary(StepKind::kGeluTanh, g.getInput(), g.getResult());
  } else if (auto m = mlir::dyn_cast<MulOp>(op)) {
    unary(StepKind::kMul, m.getLhs(), m.getResult());
    step.in1 = Buffer(m.getRhs());
  } else if (auto s = mlir::dyn_cast<AddOp>(op)) {
    unary(StepKind::kAdd, s.getLhs(), s.getResult());
    step.in1 = Buffer(s.getRhs());
  } else if (auto s = mlir::dyn_cast<ScaleOp>(op)) {
    unary(StepKind::kScale, s.getInput(), s.getResult());
    step.factor = s.getFactor().convertToFloat();
  } else if (auto s = mlir::dyn_cast<LayerScalarOp>(op)) {
    unary(StepKind::kLayerScalar, s.getInput(), s.getResult());
    step.weight = Weight(s.getScalarAttr());
  } else if (auto s = mlir::dyn_cast<SoftcapOp>(op)) {
    unary(StepKind::kSoftcap, s.getInput(), s.getResult());
    step.cap = s.getCap().convertToFloat();
  } else if (auto g = mlir::dyn_cast<GeluTanhMulOp>(op)) {
    unary(StepKind::kGeluTanhMul, g.getGate(), g.getResult());
    step.in1 = Buffer(g.getUp());
  } else if (auto r = mlir::dyn_cast<ResidualRmsNormOp>(op)) {
    unary(StepKind::kResidualRmsNorm, r.getResidual(), r.getResult());
    step.in1 = Buffer(r.getUpdate());
    step.weight = r.getGainAttr() ? Weight(r.getGainAttr()) : -1;
    step.scalar = r.getScalarAttr() ? Weight(r.getScalarAttr()) : -1;
    step.group_size = static_cast<int64_t>(r.getGroupSize());
    step.eps = r.getEps().convertToFloat();
  } else if (auto h = mlir::dyn_cast<LmHeadOp>(op)) {
    unary(StepKind::kLmHead, h.getInput(), h.getResult());
    step.weight = Weight(h.getTableAttr());
  } else if (auto s = mlir::dyn_cast<SliceOp>(op)) {
    // A view into the parent's bytes: no step.
    const int32_t parent = Buffer(s.getInput());
    BufferEntry view = plan_.buffers[parent];
    view.view_of = view.view_of >= 0 ? view.view_of : parent;
    view.offset += 4 * static_cast<uint64_t>(s.getOffset());  // same as its planned offset
    view.num_elements = static_cast<uint64_t>(
        s.getResult().getType().cast<mlir::RankedTensorType>().getNumElements());
    plan_.buffers.push_back(view);
    buffers_[s.getResult()] = static_cast<int32_t>(plan_.buffers.size() - 1);
    return absl::OkStatus();
  } else if (auto t = mlir::dyn_cast<LayerOutputOp>(op)) {
    int32_t buffer = Buffer(t.getInput());
    buffers_[t.getResult()] = buffer;
    plan_.taps.push_back(Tap{absl::StrCat("layer.", t.getLayer()), buffer});
    return absl::OkStatus();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("lowering: no kernel for op ", OpName(op)));
  }
  plan_.steps.push_back(step);
  return absl::OkStatus();
}

absl::StatusOr<Plan> Lowering::Run() {
  const llvm::StringLiteral decode_step = CortiqDialect::getDecodeStepFunctionName();
  auto func = module_.lookupSymbol<mlir::func::FuncOp>(decode_step);
  if (!func || func.getBody().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("lowering: the module has no '", decode_step.str(), "' function"));
  }
  if (auto model = module_->getAttrOfType<mlir::DictionaryAttr>(CortiqDialect::getModelAttrName())) {
    auto get = [&](llvm::StringRef key) -> int64_t {
      auto attr = model.getAs<mlir::IntegerAttr>(key);
      return attr ? attr.getInt() : 0;
    };
    if (auto source = model.getAs<mlir::StringAttr>("source")) plan_.model.source = source.str();
    plan_.model.hidden_size = get("hidden_size");
    plan_.model.num_hidden_layers = get("num_hidden_layers");
    plan_.model.max_position_embeddings = get("max_position_embeddings");
  }
  mlir::Block& body = func.getBody().front();
  if (auto arena = module_->getAttrOfType<mlir::IntegerAttr>(CortiqDialect::getArenaBytesAttrName())) {
    planned_arena_ = true;
    arena_bytes_ = static_cast<uint64_t>(arena.getInt());
  }

  // The ops whose results reach a `roots` op (through the dataflow), the roots included.
  const auto reaching = [&](auto is_root) {
    llvm::DenseSet<mlir::Operation*> reached;
    llvm::SmallVector<mlir::Operation*> worklist;
    for (mlir::Operation& op : body) {
      if (is_root(op)) worklist.push_back(&op);
    }
    while (!worklist.empty()) {
      mlir::Operation* op = worklist.pop_back_val();
      if (!reached.insert(op).second) continue;
      for (mlir::Value operand : op->getOperands()) {
        if (mlir::Operation* def = operand.getDefiningOp()) worklist.push_back(def);
      }
    }
    return reached;
  };
  // The head (logits_only): ops whose results reach neither a KV append nor a layer output.
  const llvm::DenseSet<mlir::Operation*> needed =
      reaching([](mlir::Operation& op) { return mlir::isa<KvAppendOp, LayerOutputOp>(op); });
  // The rows each op runs on: its cortiq.rows (mark-rows); without it, all rows for the ops that
  // reach a KV append or a layer output (what lowering did before mark-rows).
  const auto rows_of = [&](mlir::Operation& op) {
    if (auto mark = op.getAttrOfType<mlir::StringAttr>(CortiqDialect::getRowsAttrName())) {
      if (mark.getValue() == stringifyRows(Rows::logits)) return StepRows::kLogits;
      if (mark.getValue() == stringifyRows(Rows::all)) return StepRows::kAll;
    }
    return needed.contains(&op) ? StepRows::kAll : StepRows::kLogits;
  };

  for (mlir::Operation& op : body) {
    if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
      if (ret.getNumOperands() != 1) {
        return absl::InvalidArgumentError("lowering: decode_step must return the logits");
      }
      plan_.logits_buffer = Buffer(ret.getOperand(0));
      plan_.model.vocab_size = static_cast<int64_t>(plan_.buffers[plan_.logits_buffer].num_elements);
      continue;
    }
    const bool logits_only = !needed.contains(&op);
    // A head op always runs on the logits rows only (whatever a mark says).
    absl::Status status =
        LowerOp(&op, logits_only, logits_only ? StepRows::kLogits : rows_of(op));
    if (!status.ok()) return status;
    if (!status_.ok()) return status_;
  }
  plan_.arena_bytes = arena_bytes_;
  plan_.max_batch = std::max<int64_t>(1, options_.max_batch);
  if (plan_.max_batch > kMaxBatch ||
      plan_.arena_bytes > kMaxArenaBytes / static_cast<uint64_t>(plan_.max_batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max batch ", options_.max_batch, " must be in [1, ", kMaxBatch, "] and fit ",
        plan_.max_batch, " activation arenas of ", plan_.arena_bytes, " bytes in ",
        kMaxArenaBytes));
  }
  return std::move(plan_);
}

}  // namespace

absl::StatusOr<Plan> LowerToPlan(mlir::ModuleOp module, const LoweringOptions& options) {
  return Lowering(module, options).Run();
}

}  // namespace cortiq
