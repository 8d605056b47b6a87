package dataset

// Real world (<datadir>/realworld/, its README.md): 2,235 stdlib-only files
// from 12 permissively licensed repositories (library examples, algorithms,
// recipes, book code), each of which runs alone with `python3 FILE`, named
// <tag>__<path with "/" as "__">.py. Read as a file source (files.go), like
// thealgorithms: doctest calls as function units (realworld/<stem>/<n>),
// whole files as script units (realworld/<stem>), held out by file; runs out
// of bounds and scripts ending in an error are dropped (FileDropTrace).

// Names of the realworld sources.
const (
	SourceRealWorld          = "realworld"           // functions and scripts
	SourceRealWorldFunctions = "realworld-functions" // doctest calls only
	SourceRealWorldScripts   = "realworld-scripts"   // whole files only
)
