/**
 * How --paired measures its two targets inside a level (issue 38):
 *   interleave  A's and B's blocks take turns, one target loaded at a time (the default: for targets
 *               that share hardware, or whenever unsure; the drain between blocks is not measured)
 *   together    both targets get the whole level at the same time, block by block (for targets on
 *               separate hardware: half the wall time; the client's own load is shared by both)
 */
export const PAIRED_MODES = ['interleave', 'together'] as const
export type PairedMode = (typeof PAIRED_MODES)[number]
