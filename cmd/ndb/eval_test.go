package main

import (
	"testing"

	"ndb/engine"
	"ndb/model/infer"
)

// TestEvalMeasuresTheUsersEngine: ndb eval's model engine is the one ndb
// debug gets, from the same registry: the same model, reranking unsure
// greedy frames and answering with scores; --max-tokens and --rerank-k
// change only those knobs. Before, eval built its own predictor, which did
// neither (a different decoding path than users get).
func TestEvalMeasuresTheUsersEngine(t *testing.T) {
	if !engine.HaveDefaultModel() {
		t.Skip("no default model")
	}
	reg := debugRegistry(debugProgram{Python: "python3"})
	defer reg.Close()
	de, err := reg.Get(engine.Model, "")
	if err != nil {
		t.Fatal(err)
	}
	users, ok := engine.FormatPredictor(de).(engine.InferPredictor)
	if !ok || users.Rerank == nil {
		t.Fatalf("ndb debug's model predictor %#v", engine.FormatPredictor(de))
	}

	for _, k := range []int{infer.DefaultRerank.K, 0} {
		f := evalFlags{engine: "model", workers: 1, maxTokens: 64, rerankK: k}
		f.python = "python3"
		eng, err := f.engines()
		if err != nil {
			t.Fatal(err)
		}
		ip, ok := eng.pred.(engine.InferPredictor)
		_, scored := eng.pred.(engine.ScoredPredictor)
		want := *users.Rerank
		want.K = k
		switch {
		case !ok || !scored:
			t.Errorf("--rerank-k %d: eval's predictor %T is not the model engine's scored one", k, eng.pred)
		case ip.P != users.P || ip.Rerank == nil || *ip.Rerank != want || ip.MaxTokens != 64:
			t.Errorf("--rerank-k %d: eval's predictor %+v (rerank %+v), want ndb debug's model with rerank %+v and 64 tokens", k, ip, ip.Rerank, want)
		}
		if eng.engine.Name() != engine.Model || eng.real != eng.reg.Real() {
			t.Errorf("--rerank-k %d: engine %s, real engine not the registry's", k, eng.engine.Name())
		}
		eng.Close()
	}
	if _, err := (&evalFlags{engine: "model", rerankK: -1}).engines(); err == nil {
		t.Error("--rerank-k -1 must be refused")
	}
}
