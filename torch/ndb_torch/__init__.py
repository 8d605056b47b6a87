"""ndb_torch: ndb's network trained with PyTorch (CPU, CUDA, DDP, FSDP).

The model is exactly ndb's (model/nn): Hugging Face LlamaForCausalLM maths with
HF tensor names; the data is `ndb pack` output sampled exactly as the Go
trainer does (docs/training.md); the output is the HF Llama layout that
`ndb import` reads. Works with PyTorch 1.13 (Debian) and 2.x.

    python3 -m ndb_torch train --data PACKED --out RUN --hf-template EXPORT ...
    python3 -m ndb_torch logits --model HFDIR --tokens TOKENS.json --out PREFIX
"""
