/**
 * The expression layer: build (`col`, `lit`, `eq`, `arith`, `call`, … or `parseFilter` /
 * `exprFromAst` from SQL), check against a schema (`checkExpr`, `checkFilter`), type
 * (`inferType`), evaluate over record batches (`evaluateFilter` → mask, `evaluatePredicate` →
 * three-valued, `evaluateValue` → Arrow Data), turn masks into row indices.
 */
export {
  and,
  arith,
  between,
  call,
  cast,
  caseWhen,
  floatLit,
  negate,
  childrenOf,
  col,
  columnsOf,
  compare,
  eq,
  exprToString,
  flipCompareOp,
  ge,
  gt,
  inList,
  isNull,
  isTest,
  le,
  like,
  lit,
  literalToSql,
  lt,
  mapExpr,
  maxParamIndex,
  ne,
  not,
  or,
  param,
  visitExpr,
} from './expr.js';
export type {
  ArithExpr,
  ArithOp,
  CallExpr,
  CaseExpr,
  CaseWhen,
  CastExpr,
  NegateExpr,
  SqlTypeName,
  AndExpr,
  BetweenExpr,
  ColumnExpr,
  CompareExpr,
  CompareOp,
  Expr,
  ExprKind,
  ExprVisitor,
  InListExpr,
  IsExpr,
  LikeExpr,
  LiteralExpr,
  LiteralValue,
  NotExpr,
  OrExpr,
  ParamExpr,
} from './expr.js';
export { castAllowed, checkExpr, checkFilter, inferType, resolveField } from './check.js';
export type { CheckOptions } from './check.js';
export { clearFilterCache, exprFromAst, filterCacheSize, parseFilter, parseFilterExpr } from './parse-filter.js';
export type { ExprFromAstOptions } from './parse-filter.js';
export { evaluateFilter, evaluatePredicate, evaluateValue } from './evaluate.js';
export { hasValueNodes, validityBytes } from './eval-context.js';
export {
  AGGREGATE_FUNCTIONS,
  DATE_PART_FIELDS,
  DATE_TRUNC_UNITS,
  DISTANCE_FUNCTIONS,
  isAggregateCall,
  SCALAR_FUNCTIONS,
} from './functions.js';
export { ARROW, castTargetType, literalType, paramType, sqlKind, vectorType } from './types.js';
export type { SqlKind } from './types.js';
export { compileLike } from './like.js';
export type { TriBoolVector } from './evaluate.js';
export {
  allSelected,
  andMasks,
  andNotMasks,
  countSelected,
  indicesToMask,
  intersectIndices,
  maskToIndices,
  noneSelected,
  notMask,
  orMasks,
  unionIndices,
} from './selection.js';
export { domainOf, toStored } from './coerce.js';
export type { ColumnDomain, StoredConstant, ValueClass } from './coerce.js';
export { parseDate, parseTimestampNanos } from './temporal.js';
