import type { ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'

// What the request readers hand to the service: write bodies and atomic operations, checked for structure.

/** The linkage a write body sets for one relationship. */
export interface LinkageInput {
  readonly relationship: ResolvedRelationship
  /** The related ids; `null` clears a to-one relationship. */
  readonly ids: readonly string[] | null
  /** Pointer of the relationship's `data` member, for errors. */
  readonly pointer: string
  /** Pointer of the relationship as a whole (`/data/relationships/owner`, or `/data` of a relationship document). */
  readonly member: string
}

/** A validated create or update body. */
export interface ResourceInput {
  /** A client-generated id (create) or the resource's id (update). */
  readonly id: string | undefined
  /** Attribute name → wire value, only the attributes sent. */
  readonly attributes: Readonly<Record<string, unknown>>
  readonly relationships: readonly LinkageInput[]
}

/** Where an operation points: a resource by id or lid, optionally one of its relationships. */
export interface OperationRef {
  readonly resource: ResolvedResource
  readonly id?: string
  readonly lid?: string
  readonly relationship?: ResolvedRelationship
}

/** One operation, checked for structure; its `data` is read when it runs (lids are known only then). */
export interface Operation {
  readonly index: number
  readonly op: 'add' | 'update' | 'remove'
  /** The pointer of the operation: `/atomic:operations/<index>`. */
  readonly base: string
  readonly ref: OperationRef | undefined
  /** The resource type of `data` for resource operations. */
  readonly resource: ResolvedResource
  readonly data: unknown
  readonly hasData: boolean
  /** `meta.ifMatch`: the operation's precondition (the ETag of `GET /<type>/<id>`, or `*`), when it has one. */
  readonly ifMatch: string | undefined
}

/**
 * The readers an `/operations` batch needs while it runs (an operation's \`data\` is read only when its turn comes,
 * once the lids of the operations before it are known): the request stage's, handed to the service by the route.
 */
export interface OperationReaders {
  /** A resource object of a create or update, at \`base\` (\`/data\`). */
  resourceObject(data: unknown, resource: ResolvedResource, mode: 'create' | 'update', base: string, pathId?: string): ResourceInput
  /** The resource linkage of a relationship (\`null\` for an empty to-one), at \`pointer\`. */
  linkage(data: unknown, relationship: ResolvedRelationship, pointer: string): string[] | null
}
