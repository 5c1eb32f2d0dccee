import { jsonApi } from './plugin.js'

export { jsonApi, JsonApiOptionsError } from './plugin.js'
export type { FilterOptions, JsonApiOptions, PaginationOptions } from './options.js'
export { defineOperator, defineResource } from './schema/declaration.js'
export type {
  AttributeDeclaration,
  ClientIdPolicy,
  DerivedAttribute,
  FilterOperator,
  FilterOperatorContext,
  IdKind,
  InverseDeclaration,
  ManyToManyDeclaration,
  RelationshipDeclaration,
  ResourceDeclaration,
  RouteSelection,
  Row,
  ToOneForeignKeyDeclaration,
} from './schema/declaration.js'
export { ResourceConfigError } from './schema/resolve-resources.js'
export { JsonApiError } from './errors/json-api-error.js'
export type { ErrorObject, ErrorSource, JsonApiErrorInit } from './errors/json-api-error.js'
export { ERROR_CODES } from './errors/error-codes.js'
export type { ErrorCode } from './errors/error-codes.js'
export type { ColumnValues, FindManyQuery, RelatedRow, Repository, StorageErrorKind } from './repository/repository.js'
export { StorageError } from './repository/repository.js'
export { KyselyRepository } from './repository/kysely/kysely-repository.js'
export type { ResolvedAttribute, ResolvedRelationship, ResolvedResource, RelationshipStorage } from './schema/resolved.js'
export type { IncludeNode, PageNode, QueryTree, SortNode, SortStep } from './query/query-tree.js'
export type {
  AndNode, BuiltinOperator, CompareNode, CustomNode, ExistsNode, FieldCompareNode, FilterNode, NotNode, OrNode,
} from './query/filter-nodes.js'
export { printFilter } from './query/filter-nodes.js'
export { createEmbeddedDatabase } from './database/embedded-database.js'
export type { EmbeddedDatabase, EmbeddedDatabaseOptions } from './database/embedded-database.js'

export default jsonApi
