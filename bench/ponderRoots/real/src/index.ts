// The project's real indexing functions; this root only swaps the API for an empty one, like the noop root.
import "../../../../src/index";
