/**
 * Top-down expression rewriting for the planner: replace a whole subtree where a function says
 * so (an aggregate call by its output column, a GROUP BY expression by its group column) and
 * leave the rest — `mapExpr` works bottom-up, which would rewrite inside a subtree before the
 * subtree itself could be recognised.
 */
import {
  and,
  arith,
  between,
  call,
  caseWhen,
  cast,
  childrenOf,
  compare,
  type Expr,
  inList,
  isTest,
  like,
  negate,
  not,
  or,
  visitExpr,
} from '../exec/expr/expr.js';

/** `e` with its direct children replaced by `kids` (in `childrenOf` order). */
export function withChildren(e: Expr, kids: readonly Expr[]): Expr {
  let i = 0;
  const next = () => kids[i++];
  return visitExpr<Expr>(e, {
    column: (x) => x,
    literal: (x) => x,
    param: (x) => x,
    compare: (x) => compare(x.op, next(), next()),
    and: (x) => and(...x.operands.map(next)),
    or: (x) => or(...x.operands.map(next)),
    not: () => not(next()),
    in: (x) => inList(next(), x.list.map(next), x.negated),
    between: (x) => between(next(), next(), next(), x.negated),
    is: (x) => isTest(next(), x.test, x.negated),
    like: (x) => like(next(), next(), x),
    arith: (x) => arith(x.op, next(), next()),
    negate: () => negate(next()),
    call: (x) => call(x.name, x.args.map(next), x),
    case: (x) => {
      const operand = x.operand ? next() : null;
      const whens = x.whens.map(() => ({ when: next(), then: next() }));
      return caseWhen(operand, whens, x.otherwise ? next() : null);
    },
    cast: (x) => cast(next(), x.to),
  });
}

/** Rewrites top-down: where `fn` returns an expression the subtree is replaced and not entered. */
export function rewriteTopDown(e: Expr, fn: (x: Expr) => Expr | undefined): Expr {
  const r = fn(e);
  if (r) return r;
  const kids = childrenOf(e);
  if (kids.length === 0) return e;
  const mapped = kids.map((k) => rewriteTopDown(k, fn));
  return mapped.every((m, j) => m === kids[j]) ? e : withChildren(e, mapped);
}
