package nn

import _ "embed"

// TorchScript is testdata/torch_llama.py: the same model in PyTorch, run by
// `ndb bench train --vs-torch` ("bench CONFIG_JSON B T STEPS THREADS").
//
//go:embed testdata/torch_llama.py
var TorchScript []byte
