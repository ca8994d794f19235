/**
 * The defaults of MODEL_MAX_TRIANGLES and MODEL_MAX_UNPACKED_BYTES, with no
 * imports: the analysis worker threads load them, and each thread's start and
 * teardown cost what its module graph compiles.
 *
 * 5,000,000 triangles: five times the benchmark's 1,000,000-triangle sphere,
 * the largest binary STL the download limit lets through is about 2,100,000;
 * 512 MiB unpacked: a 5,000,000-triangle 3MF is about 85 bytes of XML a
 * triangle (430 MB) as this engine's writer and common slicers write it.
 */
export const DEFAULT_MAX_TRIANGLES = 5_000_000
export const DEFAULT_MAX_UNPACKED_BYTES = 512 * 1024 * 1024
