package dataset

// TheAlgorithms (github.com/TheAlgorithms/Python, <datadir>/thealgorithms/,
// the file name being the repository path with "/" as "__"): real-world,
// stdlib-only Python files, read as a file source (files.go): doctest calls
// as function units (thealgorithms/<stem>/<n>), whole files as script units
// (thealgorithms/<stem>), held out by file.

// Names of the TheAlgorithms sources.
const (
	SourceTheAlgorithms          = "thealgorithms"           // functions and scripts
	SourceTheAlgorithmsFunctions = "thealgorithms-functions" // doctest calls only
	SourceTheAlgorithmsScripts   = "thealgorithms-scripts"   // whole files only
)
