package nn

import (
	"fmt"
	"strconv"
	"strings"
)

// GrowDepth returns the parameters of a model with layers blocks computing
// exactly what params (of cfg) computes: after each old block i come new
// blocks copied from it, whose two residual outputs (self_attn.o_proj and
// mlp.down_proj) are zero, so each new block adds nothing until training
// moves those two matrices. Copies, not random blocks, so the new blocks'
// attention and MLP start from features the model already uses. Why: a
// deeper model trained from the trained one keeps all it learned and spends
// its new compute on top (function-preserving growth, as in Net2Net).
func GrowDepth(cfg Config, params []float32, layers int) (Config, []float32, error) {
	if err := cfg.Validate(); err != nil {
		return Config{}, nil, err
	}
	if len(params) != cfg.NumParams() {
		return Config{}, nil, fmt.Errorf("grow: %d parameters, config needs %d", len(params), cfg.NumParams())
	}
	if layers < cfg.Layers {
		return Config{}, nil, fmt.Errorf("grow: %d layers is fewer than the model's %d", layers, cfg.Layers)
	}
	out := cfg
	out.Layers = layers
	grown := make([]float32, out.NumParams())
	old := map[string]Tensor{}
	for _, t := range cfg.Layout() {
		old[t.Name] = t
	}
	for _, t := range out.Layout() {
		name := t.Name
		if rest, ok := strings.CutPrefix(name, "model.layers."); ok {
			num, field, _ := strings.Cut(rest, ".")
			layer, err := strconv.Atoi(num)
			if err != nil {
				return Config{}, nil, fmt.Errorf("grow: tensor %s", name)
			}
			// Old block i is followed by its copies (spread evenly).
			name = fmt.Sprintf("model.layers.%d.%s", layer*cfg.Layers/layers, field)
			if !isFirstOf(layer, cfg.Layers, layers) && (field == "self_attn.o_proj.weight" || field == "mlp.down_proj.weight") {
				continue // zero: the copy adds nothing yet
			}
		}
		o := old[name]
		copy(grown[t.Offset:t.Offset+t.Size], params[o.Offset:o.Offset+o.Size])
	}
	return out, grown, nil
}

// isFirstOf reports whether new layer k is the first of the new layers
// that copy an old one (the old block itself, not a zeroed copy).
func isFirstOf(k, oldLayers, newLayers int) bool {
	return k == 0 || k*oldLayers/newLayers != (k-1)*oldLayers/newLayers
}
