// The project's own config (same NETWORK / MANIFEST_FILE / RPC_URL / PGLITE_DIR handling).
export { default } from "../../../ponder.config";
