import { jsonApi } from './plugin.js'

export { jsonApi, JsonApiOptionsError } from './plugin.js'
export type {
  DatabaseOptions, FilterOptions, IncludeOptions, JsonApiOptions, OpenApiOptions, OperationsOptions, PaginationOptions, SortOptions,
} from './options.js'
export { defineResource, defineResourceFor, defineResources } from './schema/declaration.js'
export { defineOperator, defineOperatorFor } from './schema/fields.js'
export type {
  AnyResourceDeclaration, CheckedDeclaration, Declared, NoDeclarations, RegisteredResources, ResourceDeclaration, UnknownKey,
} from './schema/declaration.js'
export type {
  AggregateDeclaration,
  AggregateFunction,
  AttributeDeclaration,
  AttributeDeclarations,
  ClientIdPolicy,
  ComputedAttribute,
  ComputedContext,
  DerivedAttribute,
  DerivedRow,
  EngineName,
  FilterOperator,
  FilterOperatorContext,
  IdDeclaration,
  IdKind,
  InverseDeclaration,
  ManyToManyDeclaration,
  RelationshipDeclaration,
  RelationshipDeclarations,
  RouteSelection,
  Row,
  ToOneForeignKeyDeclaration,
} from './schema/fields.js'
export type {
  AttributeValues, ExistingResourceEvent, FieldRule, FieldRules, FieldRuleSet, HookEvent, JsonApiContext, LinkChange, RelationshipIds, ResourceHooks, StoredResource, WriteInput,
} from './schema/hooks.js'
export type { CreateAttributes, RelationshipNames, ResourceAttributes, UpdateAttributes } from './schema/resource-types.js'
export type { ConditionName, ConditionValue, FilterBuilder, RelatedId } from './schema/filter-builder.js'
export { transformFilter } from './query/transform-filter.js'
export type { FilterTransformer } from './query/transform-filter.js'
export type { JsonApiAction, JsonApiRouteConfig } from './contracts/route-config.js'
export { ResourceConfigError } from './schema/resolve-resources.js'
export { JsonApiError } from './errors/json-api-error.js'
export type { ErrorLinks, ErrorObject, ErrorSource, JsonApiErrorInit } from './errors/json-api-error.js'
export { ERROR_CODES } from './errors/error-codes.js'
export { jsonApiClientErrorHandler, jsonApiFrameworkErrors } from './routes/framework-errors.js'
export type { ErrorCode } from './errors/error-codes.js'
export type {
  ColumnValues, IncludeLayer, KeysetBound, KeysetPage, KeysetWindow, LinkTargets, PageWindow, QueryLayer, RelatedRow, Repository, RequiredRow, SelectedAggregate,
  StorageErrorKind, WriteTarget,
} from './contracts/repository.js'
export { StorageError } from './contracts/repository.js'
export { KyselyRepository } from './repository/kysely/kysely-repository.js'
export { DatabaseSchemaError } from './repository/kysely/check-database-schema.js'
export type { MissingDatabaseObject, MistypedColumn, SchemaNeed } from './repository/kysely/check-database-schema.js'
export type { AggregateSpec, CountStrategy, ResolvedAttribute, ResolvedRelationship, ResolvedResource, RelationshipStorage } from './schema/resolved.js'
export type { CursorPosition, CursorValue, CursorWindow, ElidedValue, IncludeNode, PageNode, QueryTree, SortNode, SortStep } from './query/query-tree.js'
export { keysetKeys } from './query/query-tree.js'
export { CURSOR_PAGINATION_PROFILE } from './query/cursors.js'
export type {
  AggregateTerm, AndNode, BuiltinOperator, CompareNode, ConstantNode, CustomNode, ExistsNode, FieldCompareNode, FilterNode, FilterNodeKind, LinkedToNode,
  NotNode, OrNode, PathStep, ReferencesNode,
} from './schema/filter-nodes.js'
export { andNode, compareNode, constantNode, existsNode, notNode, orNode, printFilter } from './schema/filter-nodes.js'
export { swaggerOptions } from './openapi/swagger-options.js'
export type { OpenApiDocumentOptions, SwaggerPluginOptions } from './openapi/swagger-options.js'
export { createPostgresDatabase, withCallbackQueries } from './database/postgres-database.js'
export { JsonApiPostgresDialect } from './database/postgres-driver.js'
export { createSqliteDatabase } from './database/sqlite-database.js'
export { JsonApiSqliteDialect } from './database/sqlite-driver.js'
export { createMysqlDatabase } from './database/mysql-database.js'
export { JsonApiMysqlDialect } from './database/mysql-driver.js'
export type { SqliteDatabase, SqliteDatabaseOptions } from './database/sqlite-database.js'
export type { MysqlDatabase, MysqlDatabaseOptions } from './database/mysql-database.js'
export type { PgClientClass, PostgresDatabase, PostgresDatabaseOptions } from './database/postgres-database.js'

export default jsonApi
