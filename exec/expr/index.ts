/**
 * Filter expressions: build (`col`, `lit`, `eq`, … or `parseFilter`), check against a schema
 * (`checkFilter`), evaluate over record batches (`evaluateFilter`), turn masks into row indices.
 */
export {
  and,
  between,
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
export { checkFilter, resolveField } from './check.js';
export { clearFilterCache, exprFromAst, filterCacheSize, parseFilter, parseFilterExpr } from './parse-filter.js';
export { evaluateFilter, evaluatePredicate, validityBytes } from './evaluate.js';
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
