import { andNode, existsNode, notNode, orNode, type FilterNode, type FilterNodeKind } from '../schema/filter-nodes.js'

/**
 * Rewrites of some filter node kinds. Each receives the node and `rewrite`, which transforms a child the same way (a
 * rewrite decides itself whether to descend). Kinds without an entry keep their node and have their children
 * rewritten.
 */
export type FilterTransformer = {
  readonly [K in FilterNodeKind]?: (node: Extract<FilterNode, { kind: K }>, rewrite: (child: FilterNode) => FilterNode) => FilterNode
}

/**
 * Transforms a filter tree ("existing in, new out"): every node of a kind the transformer names is replaced by what
 * its function returns; every other node is rebuilt over its transformed children. Nodes are frozen and shared: a
 * subtree that does not change is returned as it is.
 *
 * @example
 * ```ts
 * // every `name` comparison becomes case-insensitive
 * const relaxed = transformFilter(tree, {
 *   compare: (node) => node.attribute.name === 'name' && node.op === 'eq'
 *     ? compareNode(node.attribute, 'ilike', escape(String(node.value)))
 *     : node,
 * })
 * ```
 */
export function transformFilter (node: FilterNode, transformer: FilterTransformer): FilterNode {
  const rewrite = (child: FilterNode): FilterNode => {
    const own = transformer[child.kind] as ((node: FilterNode, rewrite: (child: FilterNode) => FilterNode) => FilterNode) | undefined
    if (own !== undefined) return own(child, rewrite)
    switch (child.kind) {
      case 'and':
      case 'or': {
        const items = child.items.map(rewrite)
        if (items.every((item, index) => item === child.items[index])) return child
        return child.kind === 'and' ? andNode(items) : orNode(items)
      }
      case 'not': {
        const item = rewrite(child.item)
        return item === child.item ? child : notNode(item)
      }
      case 'exists': {
        const where = child.where === undefined ? undefined : rewrite(child.where)
        return where === child.where ? child : existsNode(child.relationship, child.target, where)
      }
      default:
        return child
    }
  }
  return rewrite(node)
}
