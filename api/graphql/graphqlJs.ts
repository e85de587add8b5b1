/**
 * graphql-js, as one copy. The package has no exports map: Node resolves `graphql` to its CommonJS build
 * (index.js), Vite's resolver (vitest, and Ponder's module runner under `npm start`) to its ES build
 * (index.mjs) — two copies whose classes fail each other's instanceof checks ("Cannot use GraphQLObjectType
 * from another module or realm"). Ponder's schema builder and graphql-yoga load it the Node way, so this
 * service names that file, and every module of api/graphql imports graphql-js from here.
 */
export {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLNamedType,
  type GraphQLSchema,
  getArgumentValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql/index.js";
