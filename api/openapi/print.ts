/** Prints the OpenAPI document this build serves (`npm run lint:openapi` lints it with Redocly). */
import { buildOpenApiDocument } from "./document";

process.stdout.write(`${JSON.stringify(await buildOpenApiDocument(), null, 2)}\n`);
