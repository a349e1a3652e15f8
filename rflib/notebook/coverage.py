"""The coverage inventory: every numbered figure, table, theorem, lemma, corollary and definition of the four papers,
and the statuses a notebook may give one when it records how it covers it (:meth:`Recorder.cover`).

``PAPER_ITEMS[paper]`` lists, in the paper's order, the items the paper numbers (main text and appendices) with a
few words on what each states; ``tests/test_report.py`` checks that the committed results cover every one of them
exactly once, and that no notebook covers an item the paper does not number. ``tools/make_report.py`` turns the
recorded coverage into the table that opens ``REPRODUCTION.md``.
"""

from __future__ import annotations

STATUSES = (
    "paper scale",
    "reduced",
    "stand-in",
    "checked exactly",
    "Monte Carlo",
    "implemented",
    "not yet checked",
    "out of reach",
    "not applicable",
)
"""What a status means: **paper scale** — an experiment run at the paper's settings; **reduced** — run at smaller
settings (the detail says which); **stand-in** — run on replacement data or a replacement model (the detail says
what replaced what); **checked exactly** — a statement checked numerically against an exact oracle (closed form,
quadrature, exhaustive enumeration); **Monte Carlo** — checked by seeded Monte Carlo only; **implemented** — a
definition or algorithm implemented in rflib and exercised by the tests, with no numeric statement of its own;
**not yet checked** — a numeric statement no check covers yet (the detail gives the recipe); **out of reach** —
cannot be done here (the detail says why); **not applicable** — nothing numeric to check (a symbolic step, an
illustration, a result quoted from another paper)."""

PAPERS = {
    "hrf": "Hybrid Random Features (Choromanski et al., ICLR 2022)",
    "favor_sharp": "FAVOR#: sharp attention kernel approximations (Likhosherstov et al.)",
    "kama": "KAMA-NNs: low-dimensional rotation based neural networks (Choromanski et al., AISTATS 2019)",
    "softmax_linear": "Why softmax attention outperforms linear attention (Deng, Song, Yuan, Zhou)",
}

PAPER_ITEMS: dict[str, dict[str, str]] = {
    "hrf": {
        "Definition 2.1": "Kernel with a random-feature map representation; unbiased dot-product estimator",
        "Lemma 2.2": "Exact MSEs of trigonometric and positive (antithetic) softmax estimators",
        "Lemma 2.3": "HRF estimator equals a dot product Ψ₁(x)ᵀΨ₂(y) (eq 11)",
        "Lemma 2.4": "Complex Gaussian MGF: E exp(ωᵀz) = exp(z²/2), z complex",
        "Figure 1": "MSE surfaces over (θ, r): trig, FAVOR+, angular hybrid",
        "Theorem 3.1": "MSE of bipolar hybrid, independent (I) and shared (II) projections",
        "Lemma 3.2": "Angular λ̂ moments: E λ̂ = θ/π, E λ̂² formula",
        "Definition 3.3": "Max-relative-error ε_C and sphere relative error ε_θ,r",
        "Lemma 3.4": "Hidden symmetry: trig and FAVOR+ share max relative error W(r)/√(2m)",
        "Theorem 3.5": "Angular hybrid max relative error bound (eq 27) and √θ limits",
        "Figure 2": "Pointwise SM estimation, d = 64, r = 1, 1.5, 128 features",
        "Table 1": "MSE of HRF-ort/iid vs ORF, ORF-Had, Halton on wine/Boston",
        "Figure 3": "PTB softmax-distribution W₁, KS, negative fraction per RF method",
        "Table 2": "Conformer-Transducer WER on LibriSpeech with HRF-C/HRF-A/FAVOR+/trig attention",
        "Figure 4": "Robotics training curves: HRF (8,8) vs FAVOR+ 256, 3× fewer FLOPs",
        "Theorem D.1": "Explicit angular-hybrid MSE (eqs 45–47), both projection variants",
        "Theorem F.1": "MSE of normalised bipolar Gaussian hybrid; λ̂ moments (eqs 72–73)",
        "Theorem F.2": "Theorem F.1 specialised to equal-norm inputs on the sphere",
        "Figure 5": "Pointwise SM estimation ablation, r = 1, 1.25, 1.5",
        "Figure 6": "Clustered data: mean MSE of HRF-C vs FAVOR+ and trig over m",
        "Definition H.1": "Hybrid Gaussian-mixture estimator for clustered data (Gaussian λ, eqs 93–100)",
        "Definition H.2": "Hybrid zero-one mixture (HRF-C): cluster-indicator λ, per-pair CE estimators",
        "Table 3": "Min/max empirical MSE over 20 trials, clustered data sets",
        "Table 4": "PTB W₁, KS, negative fraction means ± std over 10 runs",
        "Figure 7": "Histogram of PTB query and key lengths",
        "Figure 8": "WikiText-2 softmax-approximation W₁ and KS per RF method",
        "Table 5": "WikiText-2 W₁ and KS means ± std over 10 runs",
        "Figure 9": "Histogram of WikiText-2 query and key lengths",
        "Figure 10": "Sampled-softmax LSTM perplexity on PTB: HRF vs trig/FAVOR+/uniform",
        "Figure 11": "Example camera image of the bi-manual sweeping task",
    },
    "favor_sharp": {
        "Figure 1": "Venn diagram of RF families; log relative variance, cifar10 and mnist/cifar10",
        "Definition 2.1": "Random-feature triple for scaled softmax kernel; estimator K̂ = PSᵀ",
        "Theorem 4.1": "DERF validity conditions give unbiased softmax-kernel RFs; variance eq 15",
        "Theorem 4.2": "Closed-form ADERF minimiser of shifted log-variance; optimal value eq 16",
        "Theorem 4.3": "Closed-form SDERF minimiser from eigendecomposition of N; optimal value eq 17",
        "Figure 2": "Log relative variance of RF families in six regimes versus σ",
        "Figure 3": "Kernel classification test accuracy vs M on 8 UCI benchmarks",
        "Figure 4": "LibriSpeech Conformer NWER: FAVOR# (SDERF) vs FAVOR++, TRANS-m and NST-8",
        "Table 1": "GLUE dev scores of warm-started BERT-base with low-rank attentions",
        "Lemma A.1": "Scalar minimiser A*(φ) of log(1−4A)−½log(1−8A)+φ/(1−8A)",
        "Lemma A.2": "For fixed A, E*=(B⁽¹⁾*)ᵀB⁽¹⁾* minimises β₁tr(EM⁽¹⁾)+β₂tr(E⁻¹M⁽²⁾)",
        "Lemma A.3": "Distinct entries: sup_Q tr(EQNQᵀ) = Σ E_{π_l π_l}Λ⁽³⁾_ll, attained at Q*",
        "Lemma A.4": "Lemma A.3 with ties: any non-ascending sort π attains the supremum",
        "Table 2": "BERT-base pretraining hyperparameters for all attention methods",
        "Table 3": "Pretraining datasets: Books (1.0B tokens) and Wikipedia (3.1B tokens)",
    },
    "kama": {
        "Definition 1": "Family 𝒢_C: products of ⌈C·d·log(d)/2⌉ Givens rotations",
        "Definition 2": "PNG kernel K_f(x, y) = E_g[f(gᵀx) f(gᵀy)] (eq 1)",
        "Theorem 1": "ORN beats iid URN in MSE by K(ε)/d, any f",
        "Theorem 2": "Random KAMA (k = L·d·log d) beats URN MSE by K(ε)/d",
        "Algorithm 1": "Givens coordinate descent on SO(d): best plane, best angle per step",
        "Theorem 3": "Algorithm 1 decreases F by ≥ Σ‖∇F‖²/(2d(d−1)B)",
        "Figure 1": "Pointwise angular-kernel MSE: URN, HORN, KAMA, ORN on boston, wine",
        "Figure 2": "Angular kernel-matrix Frobenius error on six datasets; KAMA ≈ ORN",
        "Remark 1": "Only angles θ₁…θ_K need storing to compute Sx",
        "Figure 3": "PPO returns: dense vs KAMA (K = 200) vs Toeplitz policies",
        "Figure 4": "TRPO returns: dense vs KAMA (K = 100) vs Toeplitz policies",
        "Table 1": "Parameter ratios structured/dense: KAMA 15–17 %, Toeplitz 7–8 % (PPO)",
        "Figure 5": "Ablation: KAMA policy return grows with K ∈ {10,…,200}",
    },
    "softmax_linear": {
        "Theorem 1.1": "Self-attention: softmax net separates D0/D1, linear net cannot (informal)",
        "Theorem 1.2": "Cross-attention: softmax net separates D0/D1, linear net cannot (informal)",
        "Lemma 3.1": "Hoeffding tail bound for sums of bounded independent variables",
        "Definition 3.2": "Linear functions u_lin=Ax, α_lin, f_lin = u/α (toy model)",
        "Definition 3.3": "Softmax functions u_exp=exp(Ax), α_exp, f_exp (toy model)",
        "Definition 3.4": "ReLU φ(z)=max{z,0} and shifted φ_τ(z)=max{z−τ,0}",
        "Definition 3.5": "Toy softmax network F_exp = φ(Σ_j φ_τ(⟨f_exp, y_j⟩))",
        "Figure 1": "Diagram of the toy network (m = O(log n))",
        "Figure 2": "Diagram of the self-attention network (n=4, d=3, m=2)",
        "Definition 3.6": "Toy linear-attention network F_lin (printed name F_exp, erratum E3)",
        "Definition 3.7": "m = C·log(n/δ) readouts with iid Rademacher entries",
        "Definition 3.8": "Toy datasets: D0 logits in [L, 1.4L]; D1 adds one 4L",
        "Figure 3": "Toy model success rate vs n (a) and vs m (b)",
        "Lemma 4.1": "D0 toy: |Σ f_i σ_i| small w.h.p. for f_lin and f_exp",
        "Lemma 4.2": "D1 toy: linear sum small; softmax sum ≥1/4 with sign σ_j",
        "Lemma 5.1": "Toy: F_exp(D0) = 0 with high probability",
        "Lemma 5.2": "Toy: F_exp(D1) > 0 with high probability",
        "Lemma 5.3": "Toy: F_lin(D0) = 0 with high probability",
        "Lemma 5.4": "Toy: F_lin(D1) = 0 with high probability",
        "Definition 6.1": "Self-attention datasets (informal version of Definition D.1)",
        "Figure 4": "Self-attention success rates, X = I_d, six parameter sweeps",
        "Figure 5": "Self-attention success rates, X = 1_{d×d}, six parameter sweeps",
        "Theorem 6.2": "Main result: F_exp separates self-attention D0/D1, F_lin outputs 0",
        "Fact A.1": "Tensor trick: vec(exp(A1 X A2ᵀ)) = exp((A1⊗A2) vec X)",
        "Definition C.1": "Linear attention u_lin, α_lin, f_lin, c_lin via the tensor trick",
        "Definition C.2": "Four-layer linear-attention network F_lin over rows j0 and readouts",
        "Figure 6": "Diagram of the attention computation",
        "Claim C.3": "Block j0 of (A1⊗A2)x equals row j0 of A1QKᵀA2ᵀ (linear)",
        "Definition C.4": "Softmax attention u_exp, α_exp, f_exp, c_exp via the tensor trick",
        "Claim C.5": "Block j0 of exp((A1⊗A2)x) equals exp of row j0 (softmax)",
        "Definition C.6": "Four-layer softmax-attention network F_exp (printed y ∈ R^{n×m}, E7)",
        "Definition D.1": "Self-attention D0/D1: spike a·√log n, stacked identity b, constant c",
        "Lemma D.2": "D1 softmax scores u and weights f entries (X = 1)",
        "Lemma D.3": "D1 softmax attention outputs c_exp coordinate bounds (X = 1)",
        "Lemma D.4": "D1 softmax: spike row fires w.p. ≥1/10; other rows silent w.h.p.",
        "Theorem D.5": "F_exp(D1) > 0 with high probability (X = 1)",
        "Lemma D.6": "D0 softmax scores u and weights f entries (X = 1)",
        "Lemma D.7": "D0 softmax attention outputs c_exp coordinate bounds (X = 1)",
        "Lemma D.8": "D0 softmax: |⟨c_exp, σ⟩| < (c+0.1)√log n w.h.p.",
        "Theorem D.9": "F_exp(D0) = 0 with high probability (X = 1)",
        "Lemma D.10": "D1 linear scores u_lin and weights f_lin (X = 1)",
        "Lemma D.11": "D1 linear attention outputs c_lin coordinate bounds (X = 1)",
        "Lemma D.12": "D1 linear: |⟨c_lin, σ⟩| < (c+0.1)√log n w.h.p.",
        "Theorem D.13": "F_lin(D1) = 0 with high probability (X = 1)",
        "Lemma D.14": "D0 linear scores u_lin and weights f_lin (printed QKᵀ=I, E12)",
        "Lemma D.15": "D0 linear attention outputs c_lin coordinate bounds (X = 1)",
        "Lemma D.16": "D0 linear: |⟨c_lin, σ⟩| < (c+0.1)√log n w.h.p.",
        "Theorem D.17": "F_lin(D0) = 0 with high probability (printed F_exp, E11)",
        "Lemma E.1": "D1 softmax scores and weights with QKᵀ = I_d",
        "Lemma E.2": "D1 softmax outputs c_exp bounds, QKᵀ = I_d (header says 1)",
        "Lemma E.3": "D1 softmax, X = I: spike row fires ≥1/10; others silent w.h.p.",
        "Theorem E.4": "F_exp(D1) > 0 w.h.p. with QKᵀ = I_d (other outcomes omitted)",
        "Definition F.1": "Cross-attention D0/D1: query spike a·log n, one-hot key e_j3",
        "Lemma F.2": "Cross D1 softmax scores u and weights f entries",
        "Lemma F.3": "Cross D1 softmax outputs c_exp bounds",
        "Lemma F.4": "Cross D1 softmax: spike row fires ≥1/10; others |·|<0.5 w.h.p.",
        "Theorem F.5": "Cross F_exp(D1) > 0 with high probability",
        "Lemma F.6": "Cross D0 softmax scores u and weights f entries",
        "Lemma F.7": "Cross D0 softmax outputs c_exp bounds (rows labelled j3, E16)",
        "Lemma F.8": "Cross D0 softmax: |⟨c_exp, σ⟩| < 0.5 w.h.p.",
        "Theorem F.9": "Cross F_exp(D0) = 0 with high probability (header says D1)",
        "Lemma F.10": "Cross D1 linear scores u_lin and weights f_lin",
        "Lemma F.11": "Cross D1 linear outputs c_lin bounds (header says D0, E16)",
        "Lemma F.12": "Cross D1 linear: |⟨c_lin, σ⟩| < 0.5 w.h.p. (header D0)",
        "Theorem F.13": "Cross F_lin(D1) = 0 with high probability",
        "Lemma F.14": "Cross D0 linear scores u_lin and weights f_lin (header D1)",
        "Lemma F.15": "Cross D0 linear outputs c_lin bounds (printed n=t(d−2))",
        "Lemma F.16": "Cross D0 linear: |⟨c_lin, σ⟩| < 0.5 w.h.p.",
        "Theorem F.17": "Cross F_lin(D0) = 0 with high probability",
        "Figure 7": "Cross-attention success rates over n, d, m, a1, a0",
    },
}


def split_item(item: str) -> tuple[str, str]:
    """``"hrf:Theorem 3.1"`` → ``("hrf", "Theorem 3.1")``, refusing papers and items the inventory does not list."""
    if not isinstance(item, str) or ":" not in item:
        raise ValueError(f"item must read '<paper>:<item>', e.g. 'hrf:Theorem 3.1', got {item!r}")
    paper, name = item.split(":", 1)
    if paper not in PAPERS:
        raise ValueError(f"item {item!r}: the paper must be one of {sorted(PAPERS)}")
    if name not in PAPER_ITEMS[paper]:
        raise ValueError(f"item {item!r}: {PAPERS[paper]} numbers no such item (see PAPER_ITEMS[{paper!r}])")
    return paper, name
