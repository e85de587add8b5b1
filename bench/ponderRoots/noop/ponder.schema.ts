export * from "../../../ponder.schema";
