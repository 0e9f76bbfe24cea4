// The `cortiq` dialect: registration and the op verifiers that keep the decoder graph sound
// (shapes against weights, KV-cache reads after writes, shared-KV reads of a matching cache).
#include "compiler/dialect/CortiqDialect.h"

#include <cmath>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;

#include "compiler/dialect/CortiqDialect.cpp.inc"
#include "compiler/dialect/CortiqEnums.cpp.inc"

namespace cortiq {

int64_t storageFormatBlockSize(StorageFormat format) {
  switch (format) {
    case StorageFormat::F32:
    case StorageFormat::BF16:
    case StorageFormat::F16:
      return 1;
    case StorageFormat::Q8_0:
    case StorageFormat::Q4_0:
    case StorageFormat::Q4_1:
    case StorageFormat::Q5_0:
    case StorageFormat::Q5_1:
    case StorageFormat::IQ4_NL:
      return 32;  // QK8_0, QK4_0, QK4_1, QK5_0, QK5_1, QK4_NL
    case StorageFormat::Q2_K:
    case StorageFormat::Q3_K:
    case StorageFormat::Q4_K:
    case StorageFormat::Q5_K:
    case StorageFormat::Q6_K:
    case StorageFormat::IQ4_XS:
      return 256;  // QK_K
    case StorageFormat::Q4_0x16:
      return 512;  // 16 Q4_0 blocks (ops/quantize_q4_0x16.h)
    case StorageFormat::Q8_0x16:
      return 512;  // 16 Q8_0 blocks (ops/quantize_q8_0x16.h)
    case StorageFormat::Q4_Kx16:
      return 512;  // 2 Q4_K super-blocks (ops/quantize_q4_kx16.h)
    case StorageFormat::Q5_Kx16:
      return 512;  // 2 Q5_K super-blocks (ops/quantize_q5_kx16.h)
  }
  return 1;
}

std::string listStorageFormats() {
  std::string names;
  for (uint32_t i = 0; i <= getMaxEnumValForStorageFormat(); ++i) {
    auto format = symbolizeStorageFormat(i);
    if (!format) continue;
    if (!names.empty()) names += i == getMaxEnumValForStorageFormat() ? " or " : ", ";
    names += stringifyStorageFormat(*format).str();
  }
  return names;
}

void CortiqDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/dialect/CortiqOps.cpp.inc"
      >();
}

LogicalResult OpTrait::verifyInPlace(Operation* op) {
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isa<RankedTensorType>())
    return op->emitOpError() << "is in place, so it has one tensor result";
  for (Value operand : op->getOperands()) {
    if (operand.getType().isa<TensorType>() && operand.getType() != op->getResult(0).getType())
      return op->emitOpError() << "is in place, so its tensor operands have the result type "
                               << op->getResult(0).getType() << ", not " << operand.getType();
  }
  return success();
}

LogicalResult CortiqDialect::verifyOperationAttribute(Operation* op, NamedAttribute attr) {
  const StringRef name = attr.getName().getValue();
  auto nonNegativeI64 = [&](StringRef what) -> LogicalResult {
    auto value = attr.getValue().dyn_cast<IntegerAttr>();
    if (!value || !value.getType().isInteger(64) || value.getInt() < 0)
      return op->emitError() << "'" << name << "' must be " << what << ", is " << attr.getValue();
    return success();
  };
  if (name == getModelAttrName()) {
    auto model = attr.getValue().dyn_cast<DictionaryAttr>();
    if (!isa<ModuleOp>(op) || !model)
      return op->emitError() << "'" << name << "' is a dictionary on the module";
    for (NamedAttribute entry : model) {
      const bool is_source = entry.getName() == "source";
      if (is_source ? !entry.getValue().isa<StringAttr>() : !entry.getValue().isa<IntegerAttr>())
        return op->emitError() << "'" << name << "' entry '" << entry.getName().getValue()
                               << "' must be " << (is_source ? "a string" : "an integer");
    }
    return success();
  }
  if (name == getArenaBytesAttrName()) {
    if (!isa<ModuleOp>(op)) return op->emitError() << "'" << name << "' belongs on the module";
    return nonNegativeI64("an i64 >= 0");
  }
  if (name == getArenaOffsetAttrName()) {
    if (op->getNumResults() != 1)
      return op->emitError() << "'" << name << "' belongs on an op with one result";
    if (failed(nonNegativeI64("an i64 >= 0, a multiple of 4"))) return failure();
    if (attr.getValue().cast<IntegerAttr>().getInt() % 4 != 0)
      return op->emitError() << "'" << name << "' must be a multiple of 4 (an f32 boundary), is "
                             << attr.getValue().cast<IntegerAttr>().getInt();
    return success();
  }
  if (name == getRowsAttrName()) {
    auto rows = attr.getValue().dyn_cast<StringAttr>();
    if (isa<ModuleOp, func::FuncOp, WeightOp, KvCacheOp>(op) ||
        op->hasTrait<mlir::OpTrait::IsTerminator>())
      return op->emitError() << "'" << name << "' belongs on an op of the decode step";
    if (!rows || !symbolizeRows(rows.getValue()))
      return op->emitError() << "'" << name << "' must be \"all\" or \"logits\", is "
                             << attr.getValue();
    return success();
  }
  return op->emitError() << "'" << name << "' is not an attribute of the cortiq dialect";
}

namespace {

// I64Attr getters return uint64_t in MLIR 15; the IR may still spell a negative value.
int64_t Signed(uint64_t value) { return static_cast<int64_t>(value); }

int64_t vectorLength(Value v) { return v.getType().cast<RankedTensorType>().getDimSize(0); }

// Resolves `symbol` to a cortiq.weight, or emits an error naming the attribute.
FailureOr<WeightOp> lookupWeight(Operation* op, SymbolTableCollection& symbols,
                                 FlatSymbolRefAttr symbol, StringRef role) {
  auto weight = symbols.lookupNearestSymbolFrom<WeightOp>(op, symbol);
  if (!weight)
    return op->emitOpError() << role << " " << symbol << " does not name a cortiq.weight";
  return weight;
}

// Resolves `symbol` to a 2-D weight [rows, cols].
FailureOr<WeightOp> lookupMatrix(Operation* op, SymbolTableCollection& symbols,
                                 FlatSymbolRefAttr symbol, StringRef role) {
  auto weight = lookupWeight(op, symbols, symbol, role);
  if (failed(weight)) return failure();
  if (weight->getTensorType().getRank() != 2)
    return op->emitOpError() << role << " " << symbol << " must be 2-D, has type "
                             << weight->getTensorType();
  return weight;
}

FailureOr<KvCacheOp> lookupCache(Operation* op, SymbolTableCollection& symbols,
                                 FlatSymbolRefAttr symbol) {
  auto cache = symbols.lookupNearestSymbolFrom<KvCacheOp>(op, symbol);
  if (!cache) return op->emitOpError() << "cache " << symbol << " does not name a cortiq.kv_cache";
  return cache;
}

}  // namespace

mlir::ParseResult WeightOp::parse(OpAsmParser& parser, OperationState& result) {
  StringAttr name;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(), result.attributes))
    return failure();
  auto parseSymbolInParens = [&](StringRef attr_name) -> ParseResult {
    FlatSymbolRefAttr symbol;
    if (parser.parseLParen() || parser.parseAttribute(symbol) || parser.parseRParen())
      return failure();
    result.addAttribute(attr_name, symbol);
    return success();
  };
  if (succeeded(parser.parseOptionalEqual())) {
    llvm::SMLoc loc = parser.getCurrentLocation();
    StringRef kind;
    if (parser.parseKeyword(&kind)) return failure();
    if (kind == "concat_rows") {
      SmallVector<Attribute> sources;
      if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
            FlatSymbolRefAttr source;
            if (parser.parseAttribute(source)) return failure();
            sources.push_back(source);
            return success();
          }))
        return failure();
      result.addAttribute("concat_rows", parser.getBuilder().getArrayAttr(sources));
    } else if (kind == "scale") {
      if (parseSymbolInParens("scale_of")) return failure();
      if (succeeded(parser.parseOptionalKeyword("columns")) && parseSymbolInParens("column_gain"))
        return failure();
      if (succeeded(parser.parseOptionalKeyword("factor"))) {
        double factor = 0.0;
        if (parser.parseLParen() || parser.parseFloat(factor) || parser.parseRParen())
          return failure();
        result.addAttribute("factor", parser.getBuilder().getF32FloatAttr(factor));
      }
    } else {
      return parser.emitError(loc, "expected 'concat_rows' or 'scale', got '") << kind << "'";
    }
  }
  // checkpoint(format) stored(format), each optional, in this order.
  for (StringRef attr_name : {"checkpoint", "stored"}) {
    if (failed(parser.parseOptionalKeyword(attr_name))) continue;
    StringRef name;
    llvm::SMLoc loc;
    if (parser.parseLParen()) return failure();
    loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name) || parser.parseRParen()) return failure();
    auto format = symbolizeStorageFormat(name);
    if (!format)
      return parser.emitError(loc, "expected a storage format (") << listStorageFormats()
                                                                   << "), got '" << name << "'";
    result.addAttribute(attr_name == "checkpoint" ? getCheckpointFormatAttrName(result.name)
                                                  : getStoredFormatAttrName(result.name),
                        StorageFormatAttr::get(parser.getContext(), *format));
  }
  Type type;
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColonType(type))
    return failure();
  result.addAttribute("type", TypeAttr::get(type));
  return success();
}

void WeightOp::print(OpAsmPrinter& p) {
  p << ' ';
  p.printSymbolName(getSymName());
  if (auto sources = getConcatRowsAttr()) {
    p << " = concat_rows(";
    llvm::interleaveComma(sources, p, [&](Attribute a) { p.printAttribute(a); });
    p << ")";
  }
  if (auto source = getScaleOfAttr()) {
    p << " = scale(" << source << ")";
    if (auto gain = getColumnGainAttr()) p << " columns(" << gain << ")";
    if (auto factor = getFactorAttr()) {
      p << " factor(";
      p.printAttributeWithoutType(factor);
      p << ")";
    }
  }
  if (auto format = getCheckpointFormat())
    p << " checkpoint(" << stringifyStorageFormat(*format) << ")";
  if (auto format = getStoredFormat()) p << " stored(" << stringifyStorageFormat(*format) << ")";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {SymbolTable::getSymbolAttrName(), getTypeAttrName(),
                           getConcatRowsAttrName(), getScaleOfAttrName(), getColumnGainAttrName(),
                           getFactorAttrName(), getCheckpointFormatAttrName(),
                           getStoredFormatAttrName()});
  p << " : " << getType();
}

LogicalResult WeightOp::verify() {
  auto type = getType().dyn_cast<RankedTensorType>();
  if (!type || !type.hasStaticShape())
    return emitOpError() << "must have a static-shape tensor type, has " << getType();
  Type element = type.getElementType();
  if (!element.isF32() && !element.isBF16() && !element.isF16())
    return emitOpError() << "element type must be f32, bf16 or f16, has " << element;
  if (getConcatRows() && getScaleOf())
    return emitOpError() << "is either concat_rows or scale, not both";
  if ((getColumnGain() || getFactor()) && !getScaleOf())
    return emitOpError() << "columns and factor belong to a scale derivation";
  if (getConcatRows() && (getConcatRows()->empty() || type.getRank() != 2))
    return emitOpError() << "concat_rows needs sources and a 2-D type";
  if (auto format = getCheckpointFormat()) {
    if (!isCheckpointTensor())
      return emitOpError() << "a derived weight has no checkpoint format";
    if (storageFormatBlockSize(*format) == 1)
      return emitOpError() << "checkpoint(" << stringifyStorageFormat(*format)
                           << ") names no block format: the element type gives the others";
    if (!element.isF32())
      return emitOpError() << "a weight read from " << stringifyStorageFormat(*format)
                           << " blocks has f32 elements (the decoded values), has " << element;
  }
  for (auto format : {getCheckpointFormat(), getStoredFormat()}) {
    if (!format) continue;
    const int64_t block = storageFormatBlockSize(*format);
    if (block > 1 && (type.getRank() != 2 || type.getDimSize(1) % block != 0))
      return emitOpError() << stringifyStorageFormat(*format) << " blocks need a matrix of whole "
                           << block << "-weight rows, the type is " << type;
  }
  return success();
}

LogicalResult WeightOp::verifySymbolUses(SymbolTableCollection& symbols) {
  RankedTensorType type = getTensorType();
  // A derived weight must not derive from itself, directly or through others: materializing
  // it would never end.
  if (!isCheckpointTensor()) {
    llvm::SmallVector<WeightOp> stack{*this};
    llvm::DenseSet<Operation*> seen;
    while (!stack.empty()) {
      WeightOp weight = stack.pop_back_val();
      llvm::SmallVector<Attribute> sources;
      if (auto rows = weight.getConcatRowsAttr()) sources.append(rows.begin(), rows.end());
      if (auto source = weight.getScaleOfAttr()) sources.push_back(source);
      if (auto gain = weight.getColumnGainAttr()) sources.push_back(gain);
      for (Attribute attr : sources) {
        auto source = symbols.lookupNearestSymbolFrom<WeightOp>(*this, attr.cast<FlatSymbolRefAttr>());
        if (!source) continue;  // reported below
        if (source == *this)
          return emitOpError() << "derives from itself through "
                               << FlatSymbolRefAttr::get(weight.getSymNameAttr());
        if (seen.insert(source).second) stack.push_back(source);
      }
    }
  }
  if (auto sources = getConcatRowsAttr()) {
    int64_t rows = 0;
    for (Attribute attr : sources) {
      auto source = lookupMatrix(*this, symbols, attr.cast<FlatSymbolRefAttr>(), "source");
      if (failed(source)) return failure();
      auto shape = source->getTensorType().getShape();
      if (shape[1] != type.getDimSize(1))
        return emitOpError() << "source " << attr << " has " << shape[1]
                             << " columns, the concatenation " << type.getDimSize(1);
      rows += shape[0];
    }
    if (rows != type.getDimSize(0))
      return emitOpError() << "sources have " << rows << " rows in all, the type says "
                           << type.getDimSize(0);
  }
  if (auto source_attr = getScaleOfAttr()) {
    auto source = lookupWeight(*this, symbols, source_attr, "source");
    if (failed(source)) return failure();
    if (source->getTensorType().getShape() != type.getShape())
      return emitOpError() << "source " << source_attr << " has type " << source->getTensorType()
                           << ", not the shape of " << type;
    if (auto gain_attr = getColumnGainAttr()) {
      auto gain = lookupWeight(*this, symbols, gain_attr, "columns");
      if (failed(gain)) return failure();
      auto gain_type = gain->getTensorType();
      if (type.getRank() != 2 || gain_type.getRank() != 1 ||
          gain_type.getDimSize(0) != type.getDimSize(1))
        return emitOpError() << "columns " << gain_attr << " of type " << gain_type
                             << " does not match the columns of " << type;
    }
  }
  return success();
}

LogicalResult ResidualRmsNormOp::verify() {
  int64_t n = vectorLength(getUpdate());
  if (Signed(getGroupSize()) <= 0 || n % Signed(getGroupSize()) != 0)
    return emitOpError() << "group " << Signed(getGroupSize()) << " does not divide the input length " << n;
  return success();
}

LogicalResult ResidualRmsNormOp::verifySymbolUses(SymbolTableCollection& symbols) {
  if (auto gain_attr = getGainAttr()) {
    auto gain = lookupWeight(*this, symbols, gain_attr, "gain");
    if (failed(gain)) return failure();
    auto type = gain->getTensorType();
    if (type.getRank() != 1 || type.getDimSize(0) != Signed(getGroupSize()))
      return emitOpError() << "gain " << gain_attr << " of type " << type
                           << " does not match group " << Signed(getGroupSize());
  }
  if (auto scalar_attr = getScalarAttr()) {
    auto scalar = lookupWeight(*this, symbols, scalar_attr, "scalar");
    if (failed(scalar)) return failure();
    if (scalar->getTensorType().getNumElements() != 1)
      return emitOpError() << "scalar " << scalar_attr << " must have one element";
  }
  return success();
}

LogicalResult KvCacheOp::verify() {
  if (Signed(getLayer()) < 0) return emitOpError() << "layer must be >= 0, is " << Signed(getLayer());
  if (Signed(getNumKvHeads()) <= 0 || Signed(getHeadDim()) <= 0)
    return emitOpError() << "kv_heads and head_dim must be positive";
  return success();
}

LogicalResult EmbeddingOp::verifySymbolUses(SymbolTableCollection& symbols) {
  auto table = lookupMatrix(*this, symbols, getTableAttr(), "table");
  if (failed(table)) return failure();
  int64_t cols = table->getTensorType().getDimSize(1);
  if (vectorLength(getResult()) != cols)
    return emitOpError() << "result has " << vectorLength(getResult()) << " elements but table "
                         << getTableAttr() << " rows have " << cols;
  return success();
}

LogicalResult LinearOp::verifySymbolUses(SymbolTableCollection& symbols) {
  auto weight = lookupMatrix(*this, symbols, getWeightAttr(), "weight");
  if (failed(weight)) return failure();
  auto shape = weight->getTensorType().getShape();
  if (vectorLength(getInput()) != shape[1] || vectorLength(getResult()) != shape[0])
    return emitOpError() << "weight " << getWeightAttr() << " of shape [" << shape[0] << ", "
                         << shape[1] << "] does not map " << vectorLength(getInput())
                         << " inputs to " << vectorLength(getResult()) << " outputs";
  return success();
}

LogicalResult LmHeadOp::verifySymbolUses(SymbolTableCollection& symbols) {
  auto table = lookupMatrix(*this, symbols, getTableAttr(), "table");
  if (failed(table)) return failure();
  auto shape = table->getTensorType().getShape();
  if (vectorLength(getInput()) != shape[1] || vectorLength(getResult()) != shape[0])
    return emitOpError() << "table " << getTableAttr() << " of shape [" << shape[0] << ", "
                         << shape[1] << "] does not map " << vectorLength(getInput())
                         << " inputs to " << vectorLength(getResult()) << " logits";
  return success();
}

LogicalResult RmsNormOp::verify() {
  int64_t n = vectorLength(getInput());
  if (Signed(getGroupSize()) <= 0 || n % Signed(getGroupSize()) != 0)
    return emitOpError() << "group " << Signed(getGroupSize()) << " does not divide the input length " << n;
  if (!(getEps().convertToFloat() >= 0.0f) || !std::isfinite(getEps().convertToFloat()))
    return emitOpError() << "eps must be finite and >= 0";
  return success();
}

LogicalResult RmsNormOp::verifySymbolUses(SymbolTableCollection& symbols) {
  if (!getGainAttr()) return success();
  auto gain = lookupWeight(*this, symbols, getGainAttr(), "gain");
  if (failed(gain)) return failure();
  auto type = gain->getTensorType();
  if (type.getRank() != 1 || type.getDimSize(0) != Signed(getGroupSize()))
    return emitOpError() << "gain " << getGainAttr() << " of type " << type
                         << " does not match group " << Signed(getGroupSize());
  return success();
}

LogicalResult RopeOp::verify() {
  int64_t n = vectorLength(getInput());
  int64_t head_dim = Signed(getHeadDim());
  if (head_dim <= 0 || head_dim % 2 != 0 || n % head_dim != 0)
    return emitOpError() << "head_dim " << head_dim << " must be even and divide the input length "
                         << n;
  int64_t half = head_dim / 2;
  if (getVariant() == RopeVariant::Default && Signed(getRotatedPairs()) != half)
    return emitOpError() << "default RoPE rotates all " << half << " pairs, not "
                         << Signed(getRotatedPairs());
  if (Signed(getRotatedPairs()) <= 0 || Signed(getRotatedPairs()) > half)
    return emitOpError() << "pairs " << Signed(getRotatedPairs()) << " must be in [1, " << half << "]";
  if (!(getTheta().convertToDouble() > 0.0) || !std::isfinite(getTheta().convertToDouble()))
    return emitOpError() << "theta must be positive and finite";
  return success();
}

LogicalResult KvAppendOp::verifySymbolUses(SymbolTableCollection& symbols) {
  auto cache = lookupCache(*this, symbols, getCacheAttr());
  if (failed(cache)) return failure();
  int64_t width = Signed(cache->getNumKvHeads()) * Signed(cache->getHeadDim());
  if (vectorLength(getKey()) != width || vectorLength(getValue()) != width)
    return emitOpError() << "key/value of " << vectorLength(getKey()) << "/"
                         << vectorLength(getValue()) << " elements do not match cache "
                         << getCacheAttr() << " (" << Signed(cache->getNumKvHeads()) << " kv heads x "
                         << Signed(cache->getHeadDim()) << ")";
  return success();
}

LogicalResult AttentionOp::verify() {
  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError() << "scale must be finite";
  if (getLayerType() == AttentionType::full && getWindow())
    return emitOpError() << "a full-attention layer has no window";
  if (getLayerType() == AttentionType::sliding && (!getWindow() || Signed(*getWindow()) <= 0))
    return emitOpError() << "a sliding-attention layer needs a positive window";
  if (Signed(getNumHeads()) <= 0 || vectorLength(getQuery()) % Signed(getNumHeads()) != 0)
    return emitOpError() << "heads " << Signed(getNumHeads()) << " does not divide the query length "
                         << vectorLength(getQuery());
  if (vectorLength(getResult()) != vectorLength(getQuery()))
    return emitOpError() << "result length " << vectorLength(getResult())
                         << " differs from the query length " << vectorLength(getQuery());
  return success();
}

LogicalResult AttentionOp::verifySymbolUses(SymbolTableCollection& symbols) {
  auto cache = lookupCache(*this, symbols, getCacheAttr());
  if (failed(cache)) return failure();
  if (cache->getLayerType() != getLayerType())
    return emitOpError() << "layer " << Signed(getLayer()) << " is " << stringifyAttentionType(getLayerType())
                         << " attention but reads the " << stringifyAttentionType(cache->getLayerType())
                         << " cache " << getCacheAttr() << " of layer " << Signed(cache->getLayer());
  int64_t head_dim = vectorLength(getQuery()) / Signed(getNumHeads());
  if (head_dim != Signed(cache->getHeadDim()))
    return emitOpError() << "query head width " << head_dim << " differs from the head_dim "
                         << Signed(cache->getHeadDim()) << " of cache " << getCacheAttr() << " (layer "
                         << Signed(cache->getLayer()) << ")";
  if (Signed(getNumHeads()) % Signed(cache->getNumKvHeads()) != 0)
    return emitOpError() << "heads " << Signed(getNumHeads()) << " is not a multiple of the "
                         << Signed(cache->getNumKvHeads()) << " kv heads of " << getCacheAttr();
  // The cache must be written earlier in the same step: a read before any write would see
  // nothing for the current position.
  for (Operation* prev = getOperation()->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto append = dyn_cast<KvAppendOp>(prev))
      if (append.getCacheAttr() == getCacheAttr()) return success();
  }
  return emitOpError() << "reads cache " << getCacheAttr() << " before any layer writes it";
}

LogicalResult LayerScalarOp::verifySymbolUses(SymbolTableCollection& symbols) {
  auto scalar = lookupWeight(*this, symbols, getScalarAttr(), "scalar");
  if (failed(scalar)) return failure();
  if (scalar->getTensorType().getNumElements() != 1)
    return emitOpError() << "scalar " << getScalarAttr() << " must have one element, has type "
                         << scalar->getTensorType();
  return success();
}

LogicalResult SoftcapOp::verify() {
  if (!(getCap().convertToFloat() > 0.0f) || !std::isfinite(getCap().convertToFloat()))
    return emitOpError() << "cap must be positive";
  return success();
}

LogicalResult SliceOp::verify() {
  int64_t n = vectorLength(getInput());
  int64_t size = vectorLength(getResult());
  int64_t offset = Signed(getOffset());
  int64_t end = 0;
  if (__builtin_add_overflow(offset, size, &end))
    return emitOpError() << "slice offset " << offset << " is outside the input of " << n
                         << " elements";
  if (offset < 0 || end > n)
    return emitOpError() << "slice [" << offset << ", " << end
                         << ") is outside the input of " << n << " elements";
  return success();
}

}  // namespace cortiq

#define GET_OP_CLASSES
#include "compiler/dialect/CortiqOps.cpp.inc"
