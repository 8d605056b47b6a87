package nn

import "math"

// Elementwise kernels of the network, on whole rows. Callers slice the
// buffers to a range of rows so goroutines can split the work. kern is the
// Go implementation here and vectorised C in cgo builds (kernels_c.go):
// exponentials dominate the softmaxes and SiLU, and Go does not vectorise.
type kernelSet struct {
	// attnSoftmax turns rows of attention scores s (rows, ld) into
	// probabilities over their causal part (row r sees t0+r+1 keys), zeroes
	// the rest and stores each row's log-sum-exp in lse (rows).
	attnSoftmax func(s []float32, rows, ld, t0 int, lse []float32)
	// attnSoftmaxBackward recomputes p = exp(s - lse) in place and turns dp
	// into ds = p * (dp - D), D = dy . y per row (dy, y strided by ldy, dh wide).
	attnSoftmaxBackward func(p, dp []float32, rows, ld, t0 int, lse, dy, y []float32, ldy, dh int)
	// attnGradScores turns dp into ds = p * (dp - D), D = dy . y per row, from
	// stored probabilities p (zero beyond the causal part, so ds is too).
	attnGradScores func(p, dp []float32, rows, ld int, dy, y []float32, ldy, dh int)
	// xentForward writes each row's log-sum-exp and loss (lse - logit[target]);
	// rows with a negative target get loss 0.
	xentForward func(logits []float32, rows, v int, targets []int32, lse, loss []float32)
	// xentBackward turns logits into (softmax - onehot(target)) * inv in place.
	xentBackward func(logits []float32, rows, v int, targets []int32, lse []float32, inv float32)
	// swiglu computes h (rows, F) = silu(gate) * up from gu (rows, 2F).
	swiglu func(h, gu []float32, rows, f int)
	// swigluBackward computes dgu (rows, 2F) from dh (rows, F).
	swigluBackward func(dgu, dh, gu []float32, rows, f int)
	// rmsNorm computes out = w * x / sqrt(mean(x^2) + eps) per row and the
	// inverse RMS in rstd (nil to skip).
	rmsNorm func(out, rstd, x, w []float32, rows, c int, eps float32)
	// rmsNormBackward adds the input gradient to dx and the weight gradient to dw.
	rmsNormBackward func(dx, dw, dout, x, rstd, w []float32, rows, c int)
	// adamw updates p, m, v from g (see AdamW.Update).
	adamw func(p, g, m, v []float32, b1, b2, eps, decay, stepSize, bc2sqrt float32)

	// ropeRows rotates the first nvec head vectors (dh wide, consecutive) of
	// each row of x (rows ld apart); row r is at position (t0+r) mod T of
	// the cos/sin tables (see rope; inverse for the backward pass).
	ropeRows func(x []float32, rows, ld, nvec, dh int, cos, sin []float32, t0, T int, inverse bool)
	// sumSquares returns the sum of x[i]^2, accumulated in float64.
	sumSquares func(x []float32) float64

	// attnForwardHead and attnBackwardHead, when not nil, run one (batch,
	// head) of causal attention fused (register-tiled products, softmax
	// between) for head sizes that are a multiple of 32. q, k, v and dq, dk,
	// dv are the head's (T, dh) views, rows ld apart; y and dy rows ldy
	// apart; lse (T). With keep, probs holds the head's probability blocks
	// (blockOffset layout; written forward, read backward), else forward
	// uses it as one (attnBlock, attnWidth(T)) scratch block and backward
	// recomputes into p. p, dp are such blocks, work attnWorkFloats(T, dh)
	// floats. Nil in the Go set: attention then goes through sgemm.
	attnForwardHead  func(q, k, v []float32, ld int, y []float32, ldy int, lse, probs []float32, keep bool, work []float32, T, dh int, scale float32)
	attnBackwardHead func(q, k, v, dq, dk, dv []float32, ld int, y, dy []float32, ldy int, lse, probs []float32, keep bool, p, dp, work []float32, T, dh int, scale float32)
}

var goKernels = kernelSet{goAttnSoftmax, goAttnSoftmaxBackward, goAttnGradScores, goXentForward, goXentBackward,
	goSwiglu, goSwigluBackward, goRMSNorm, goRMSNormBackward, goAdamW, goRopeRows, goSumSquares, nil, nil}

var kern = goKernels

// KernelISA names the elementwise kernels in use: "go", or the instruction
// set of the C kernels ("avx512", "avx2", "sse2").
var KernelISA = "go"

// expf is a float32 e^x (Cephes' expf polynomial, about 2 ulp), several
// times faster than float64 math.Exp.
func expf(x float32) float32 {
	if x < -87.3 {
		return 0
	}
	if x > 88.7 {
		return float32(math.Inf(1))
	}
	// x = n*ln2 + r, |r| <= ln2/2
	n := float32(math.Floor(float64(x*1.44269504088896341 + 0.5)))
	r := x - n*0.693359375
	r -= n * -2.12194440e-4
	r2 := r * r
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*r2 + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// softmaxRow turns row into probabilities in place and returns log-sum-exp.
func softmaxRow(row []float32) float32 {
	mx := float32(math.Inf(-1))
	for _, v := range row {
		mx = max(mx, v)
	}
	var sum float32
	for j, v := range row {
		e := expf(v - mx)
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
	return mx + float32(math.Log(float64(sum)))
}

func goAttnSoftmax(s []float32, rows, ld, t0 int, lse []float32) {
	for r := range rows {
		n := min(t0+r+1, ld)
		lse[r] = softmaxRow(s[r*ld : r*ld+n])
		clear(s[r*ld+n : (r+1)*ld])
	}
}

func goAttnSoftmaxBackward(p, dp []float32, rows, ld, t0 int, lse, dy, y []float32, ldy, dh int) {
	for r := range rows {
		n := min(t0+r+1, ld)
		var d float32 // D = sum_j p_j dp_j = dy . y
		for j := range dh {
			d += dy[r*ldy+j] * y[r*ldy+j]
		}
		pr, dr := p[r*ld:(r+1)*ld], dp[r*ld:(r+1)*ld]
		l := lse[r]
		for j := range n {
			pr[j] = expf(pr[j] - l)
			dr[j] = pr[j] * (dr[j] - d)
		}
		clear(pr[n:])
		clear(dr[n:])
	}
}

func goAttnGradScores(p, dp []float32, rows, ld int, dy, y []float32, ldy, dh int) {
	for r := range rows {
		var d float32
		for j := range dh {
			d += dy[r*ldy+j] * y[r*ldy+j]
		}
		pr, dr := p[r*ld:(r+1)*ld], dp[r*ld:(r+1)*ld]
		for j, pv := range pr {
			dr[j] = pv * (dr[j] - d)
		}
	}
}

func goXentForward(logits []float32, rows, v int, targets []int32, lse, loss []float32) {
	for r := range rows {
		loss[r] = 0
		if targets[r] < 0 {
			continue
		}
		row := logits[r*v : (r+1)*v]
		mx := float32(math.Inf(-1))
		for _, x := range row {
			mx = max(mx, x)
		}
		var sum float32
		for _, x := range row {
			sum += expf(x - mx)
		}
		lse[r] = mx + float32(math.Log(float64(sum)))
		loss[r] = lse[r] - row[targets[r]]
	}
}

func goXentBackward(logits []float32, rows, v int, targets []int32, lse []float32, inv float32) {
	for r := range rows {
		row := logits[r*v : (r+1)*v]
		t := targets[r]
		if t < 0 {
			clear(row)
			continue
		}
		for j, x := range row {
			row[j] = expf(x-lse[r]) * inv
		}
		row[t] -= inv
	}
}

func goSwiglu(h, gu []float32, rows, f int) {
	for r := range rows {
		g, u, hr := gu[r*2*f:r*2*f+f], gu[r*2*f+f:(r+1)*2*f], h[r*f:(r+1)*f]
		for j, gv := range g {
			hr[j] = gv / (1 + expf(-gv)) * u[j]
		}
	}
}

func goSwigluBackward(dgu, dh, gu []float32, rows, f int) {
	for r := range rows {
		g, u := gu[r*2*f:r*2*f+f], gu[r*2*f+f:(r+1)*2*f]
		dg, du, d := dgu[r*2*f:r*2*f+f], dgu[r*2*f+f:(r+1)*2*f], dh[r*f:(r+1)*f]
		for j, gv := range g {
			s := 1 / (1 + expf(-gv))
			du[j] = d[j] * gv * s
			dg[j] = d[j] * u[j] * s * (1 + gv*(1-s))
		}
	}
}

func goRMSNorm(out, rstd, x, w []float32, rows, c int, eps float32) {
	for i := range rows {
		row := x[i*c : i*c+c]
		var ss float32
		for _, v := range row {
			ss += v * v
		}
		r := float32(1 / math.Sqrt(float64(ss/float32(c)+eps)))
		if rstd != nil {
			rstd[i] = r
		}
		o := out[i*c : i*c+c]
		for j, v := range row {
			o[j] = w[j] * (v * r)
		}
	}
}

func goRMSNormBackward(dx, dw, dout, x, rstd, w []float32, rows, c int) {
	for i := range rows {
		xr, dor, dxr := x[i*c:i*c+c], dout[i*c:i*c+c], dx[i*c:i*c+c]
		r := rstd[i]
		var dot float32 // sum_j dout_j * w_j * xhat_j
		for j, v := range xr {
			xhat := v * r
			dw[j] += dor[j] * xhat
			dot += dor[j] * w[j] * xhat
		}
		dot /= float32(c)
		for j, v := range xr {
			dxr[j] += r * (dor[j]*w[j] - v*r*dot)
		}
	}
}

func goAdamW(p, g, m, v []float32, b1, b2, eps, decay, stepSize, bc2sqrt float32) {
	for i, gi := range g {
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		denom := float32(math.Sqrt(float64(v[i])))/bc2sqrt + eps
		p[i] = p[i]*decay - stepSize*m[i]/denom
	}
}

// ropeTables returns cos and sin (maxSeq, Dh/2) for HF's rotary embedding:
// angle(pos, i) = pos / theta^(2i/Dh).
func ropeTables(maxSeq, headDim int, theta float64) (cos, sin []float32) {
	half := headDim / 2
	cos = make([]float32, maxSeq*half)
	sin = make([]float32, maxSeq*half)
	for i := 0; i < half; i++ {
		// float32 inverse frequency as HF computes it
		invFreq := float32(1 / math.Pow(theta, float64(2*i)/float64(headDim)))
		for p := 0; p < maxSeq; p++ {
			a := float64(float32(p) * invFreq)
			cos[p*half+i] = float32(math.Cos(a))
			sin[p*half+i] = float32(math.Sin(a))
		}
	}
	return cos, sin
}

func goRopeRows(x []float32, rows, ld, nvec, dh int, cos, sin []float32, t0, T int, inverse bool) {
	half := dh / 2
	for r := range rows {
		t := (t0 + r) % T
		cs, sn := cos[t*half:(t+1)*half], sin[t*half:(t+1)*half]
		for h := range nvec {
			rope(x[r*ld+h*dh:r*ld+(h+1)*dh], cs, sn, inverse)
		}
	}
}

func goSumSquares(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// rope rotates one head vector x (Dh) at table row cs/sn (Dh/2) in HF's
// rotate_half convention: the first half pairs with the second half.
// inverse=true applies the transpose rotation (the backward pass).
func rope(x, cs, sn []float32, inverse bool) {
	half := len(cs)
	a, b := x[:half], x[half:2*half]
	for i := range half {
		c, s := cs[i], sn[i]
		if inverse {
			s = -s
		}
		x1, x2 := a[i], b[i]
		a[i] = x1*c - x2*s
		b[i] = x2*c + x1*s
	}
}
