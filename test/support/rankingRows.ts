import type { HolderVe, VeRows } from "../../api/read/contract";

/** Every row of a ranking, in board order (a ranking makes its rows as they are asked for). */
export const rowsOf = (rows: VeRows): HolderVe[] => Array.from({ length: rows.length }, (_, i) => rows.get(i)!);
