//! BERT encoder forward pass on the CPU, with Hugging Face module names
//! (`BertEmbeddings`, `BertSelfAttention`, `BertIntermediate`, ...) and safetensors key paths.
//!
//! Sequences of a batch are packed end to end (`[total_tokens, hidden]`, no padding); only
//! attention looks at sequence boundaries. Shapes below use `T` = total tokens of the batch,
//! `H` = `hidden_size`, `I` = `intermediate_size`.
use safetensors::SafeTensors;
use serde::Deserialize;

use super::Precision;
use super::gemm::{Packed, matmul_bias, matmul_bias_gelu, matmul_strided};
use super::gemm_i8::{PackedI8, QuantRows, matmul_bias_i8};
use super::ops;
use crate::error::{ModelError, Result};

/// The `config.json` fields the encoder needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BertConfig {
    /// `H`, e.g. 384.
    pub hidden_size: usize,
    /// Transformer layers, e.g. 6.
    pub num_hidden_layers: usize,
    /// Attention heads, e.g. 12 (head size `H / heads`).
    pub num_attention_heads: usize,
    /// `I`, e.g. 1536.
    pub intermediate_size: usize,
    /// Position table size, e.g. 512.
    pub max_position_embeddings: usize,
    /// Token-type table size, e.g. 2.
    #[serde(default = "one")]
    pub type_vocab_size: usize,
    /// Vocabulary size, e.g. 30522.
    pub vocab_size: usize,
    /// LayerNorm epsilon, e.g. 1e-12.
    #[serde(default = "eps")]
    pub layer_norm_eps: f32,
    /// Must be `gelu` (erf form).
    #[serde(default = "gelu")]
    pub hidden_act: String,
    /// `bert` (also accepted: `roberta`-free BERT variants declaring `bert`).
    #[serde(default)]
    pub model_type: Option<String>,
    /// Must be `absolute` if present.
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

fn one() -> usize {
    1
}
fn eps() -> f32 {
    1e-12
}
fn gelu() -> String {
    "gelu".into()
}

/// The largest `hidden_size` a config may name.
pub const MAX_HIDDEN: usize = 8192;
/// The most `num_hidden_layers` a config may name.
pub const MAX_LAYERS: usize = 256;

impl BertConfig {
    /// Parses and validates `config.json`.
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        let c: BertConfig = serde_json::from_slice(bytes).map_err(|e| ModelError::InvalidConfig { reason: e.to_string() })?;
        let unsupported = |reason: String| -> Result<Self> { Err(ModelError::Unsupported { reason }.into()) };
        if let Some(t) = &c.model_type
            && t != "bert"
        {
            return unsupported(format!("model_type {t:?} (only \"bert\" is supported)"));
        }
        if c.hidden_act != "gelu" {
            return unsupported(format!("hidden_act {:?} (only \"gelu\" is supported)", c.hidden_act));
        }
        if let Some(p) = &c.position_embedding_type
            && p != "absolute"
        {
            return unsupported(format!("position_embedding_type {p:?}"));
        }
        if c.num_attention_heads == 0 || c.hidden_size == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return unsupported(format!("hidden_size {} not divisible by num_attention_heads {}", c.hidden_size, c.num_attention_heads));
        }
        if c.num_hidden_layers == 0 || c.intermediate_size == 0 || c.max_position_embeddings < 2 {
            return unsupported("empty layer, intermediate or position sizes".into());
        }
        // Sizes far past any BERT (BERT-large: 1,024 / 24 / 4,096): the numbers size allocations
        // made before the weights are checked, so they are bounded here.
        let (h, l, i, p, v) = (c.hidden_size, c.num_hidden_layers, c.intermediate_size, c.max_position_embeddings, c.vocab_size);
        if h > MAX_HIDDEN || l > MAX_LAYERS || i > 8 * MAX_HIDDEN || p > 1 << 20 || v > 1 << 22 || c.type_vocab_size > 1 << 16 {
            return unsupported(format!(
                "hidden_size {h}, num_hidden_layers {l}, intermediate_size {i}, max_position_embeddings {p}, vocab_size {v} or \
                 type_vocab_size {} past {MAX_HIDDEN}, {MAX_LAYERS}, {}, {}, {}, {}",
                c.type_vocab_size,
                8 * MAX_HIDDEN,
                1 << 20,
                1 << 22,
                1 << 16
            ));
        }
        Ok(c)
    }
    /// Maximum sequence length used for embedding: min(256, max_position_embeddings), the
    /// sentence-transformers default for MiniLM models.
    pub fn max_seq_len(&self) -> usize {
        self.max_position_embeddings.min(256)
    }
}

pub(crate) struct LayerNorm {
    pub(crate) weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
    pub(crate) eps: f32,
}

impl LayerNorm {
    /// In place over rows of `x` `[rows, H]`.
    fn forward(&self, x: &mut [f32]) {
        ops::layer_norm(x, &self.weight, &self.bias, self.eps);
    }
}

pub(crate) struct Linear {
    pub(crate) w: Packed,
    /// The int8 copy of `w`, with [`Precision::Int8`].
    pub(crate) q: Option<Int8Linear>,
    pub(crate) b: Vec<f32>,
}

/// A linear layer's int8 form: activations are divided by a per-input-channel smoothing factor
/// `s` before their 7-bit quantization and the weights' rows multiplied by it (SmoothQuant, Xiao
/// et al. 2023, §4 with α = 0.5: `s_c = √(max|X_c| / max|W_c|)`), so that the few channels
/// where BERT's activations are large no longer take the whole 7-bit range of every row.
pub(crate) struct Int8Linear {
    w: PackedI8,
    /// `1 / s_c`, `[k]`.
    inv_smooth: Vec<f32>,
}

impl Linear {
    fn new(w: Packed, b: Vec<f32>) -> Self {
        Linear { w, q: None, b }
    }

    /// `act(x · W + b)` (`act`: GELU when `gelu`, fused into the product's store), through the
    /// int8 form when there is one. `s` holds the quantized rows.
    fn forward(&self, x: &[f32], rows: usize, out: &mut Vec<f32>, gelu: bool, s: &mut QuantRows) {
        out.resize(rows * self.w.n(), 0.0);
        match (&self.q, gelu) {
            (Some(q), _) => matmul_bias_i8(x, rows, &q.w, Some(&q.inv_smooth), &self.b, out, gelu, s),
            (None, false) => matmul_bias(x, rows, &self.w, &self.b, out),
            (None, true) => matmul_bias_gelu(x, rows, &self.w, &self.b, out),
        }
    }

    /// The int8 form for activations whose channel `c` reaches at most `x_max[c]` in magnitude.
    fn quantize(&mut self, x_max: &[f32]) {
        let (k, n, d) = (self.w.k(), self.w.n(), self.w.as_slice());
        let panel = super::gemm::PANEL;
        let at = |i: usize, j: usize| d[((j / panel) * k + i) * panel + j % panel];
        let smooth: Vec<f32> = (0..k)
            .map(|i| {
                let w_max = (0..n).map(|j| at(i, j).abs()).fold(0f32, f32::max);
                let s = (x_max[i] / w_max).sqrt();
                if s.is_finite() && s > 0.0 { s.clamp(1e-4, 1e4) } else { 1.0 }
            })
            .collect();
        let w_nk: Vec<f32> = (0..n * k).map(|x| at(x % k, x / k) * smooth[x % k]).collect();
        self.q = Some(Int8Linear { w: PackedI8::from_linear(&w_nk, n, k), inv_smooth: smooth.iter().map(|s| 1.0 / s).collect() });
    }
}

/// Sentences whose activations set the smoothing factors of the int8 form: what the
/// linear layers see on ordinary text (prose, a heading path, a list, code, numbers, a
/// question), in English and a few other scripts. The factors depend on the model's
/// channels more than on the text.
const CALIBRATION: &[&str] = &[
    "Owls hunt at night: their soft feathers make their flight almost silent.",
    "Getting started > Installation\nRun `npm install webrag`, then open the demo at http://127.0.0.1:8080/.",
    "- Step 1: parse the document.\n- Step 2: split it into chunks of at most 256 tokens.",
    "fn main() { let v: Vec<u32> = (0..10).collect(); println!(\"{v:?}\"); }",
    "The 2019 report lists revenue of $4.2 billion, up 12% from 2018 (Table 3, p. 41).",
    "Which river flows through the capital of the country where the Eiffel Tower stands?",
    "In 1905, Albert Einstein published four papers that changed physics.",
    "Der schnelle braune Fuchs springt über den faulen Hund; ça va très bien, merci.",
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "Error [STORE_CORRUPT]: the record \"doc:42\" could not be decoded (expected 384 floats).",
    "...",
    "BM25, dense vectors and the pseudo-graph are fused by reciprocal-rank fusion (k = 60).",
];

/// One `BertLayer`: self-attention (Q/K/V fused into one `[H, 3H]` projection), `BertSelfOutput`
/// (dense + residual + LayerNorm), `BertIntermediate` (dense + GELU), `BertOutput`.
pub(crate) struct BertLayer {
    pub(crate) qkv: Linear,
    pub(crate) attention_output: Linear,
    pub(crate) attention_ln: LayerNorm,
    pub(crate) intermediate: Linear,
    pub(crate) output: Linear,
    pub(crate) output_ln: LayerNorm,
}

impl BertLayer {
    /// The four linear layers, in forward order (Q/K/V, attention output, intermediate,
    /// output): the order of `forward_observed`'s indices.
    fn linears_mut(&mut self) -> [&mut Linear; 4] {
        [&mut self.qkv, &mut self.attention_output, &mut self.intermediate, &mut self.output]
    }
}

/// Buffers reused across the heads and sequences of one attention call.
struct AttentionScratch {
    scores: Vec<f32>,
    kt: Packed,
    v: Packed,
}

impl Default for AttentionScratch {
    fn default() -> Self {
        AttentionScratch { scores: Vec::new(), kt: Packed::from_kn(&[], 0, 0), v: Packed::from_kn(&[], 0, 0) }
    }
}

/// A loaded BERT encoder.
pub struct BertModel {
    config: BertConfig,
    pub(crate) word_embeddings: Vec<f32>,
    pub(crate) position_embeddings: Vec<f32>,
    pub(crate) token_type_embeddings: Vec<f32>,
    pub(crate) embeddings_ln: LayerNorm,
    pub(crate) layers: Vec<BertLayer>,
}

struct Weights<'a> {
    st: SafeTensors<'a>,
    prefix: &'static str,
}

impl Weights<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let full = format!("{}{name}", self.prefix);
        let t = self.st.tensor(&full).map_err(|_| ModelError::TensorMissing { name: full.clone() })?;
        let bad = || ModelError::TensorShape {
            name: full.clone(),
            expected: shape.to_vec(),
            found: t.shape().to_vec(),
            dtype: format!("{:?}", t.dtype()),
        };
        if t.shape() != shape {
            return Err(bad().into());
        }
        // F32, F16, BF16, or int8 with per-row scales ([`super::quantize`]).
        let Some(v) = super::quantize::dequantize(&self.st, &full, &t)? else { return Err(bad().into()) };
        if v.len() != shape.iter().product::<usize>() {
            return Err(bad().into());
        }
        Ok(v)
    }
    fn ln(&self, name: &str, h: usize, eps: f32) -> Result<LayerNorm> {
        Ok(LayerNorm { weight: self.get(&format!("{name}.weight"), &[h])?, bias: self.get(&format!("{name}.bias"), &[h])?, eps })
    }
    fn linear(&self, name: &str, n: usize, k: usize) -> Result<Linear> {
        let w = self.get(&format!("{name}.weight"), &[n, k])?;
        Ok(Linear::new(Packed::from_linear(&w, n, k), self.get(&format!("{name}.bias"), &[n])?))
    }
}

impl BertModel {
    /// Loads weights from a safetensors file. Keys may carry a `bert.` prefix (as in
    /// `BertForMaskedLM` checkpoints) or not (sentence-transformers' `BertModel`).
    pub fn from_safetensors(config: BertConfig, bytes: &[u8]) -> Result<Self> {
        let st = SafeTensors::deserialize(bytes).map_err(|e| ModelError::CorruptWeights { reason: e.to_string() })?;
        let prefix = if st.names().iter().any(|n| n.starts_with("bert.embeddings.")) { "bert." } else { "" };
        let w = Weights { st, prefix };
        let (h, i, eps) = (config.hidden_size, config.intermediate_size, config.layer_norm_eps);
        let word_embeddings = w.get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?;
        let position_embeddings = w.get("embeddings.position_embeddings.weight", &[config.max_position_embeddings, h])?;
        let token_type_embeddings = w.get("embeddings.token_type_embeddings.weight", &[config.type_vocab_size, h])?;
        let embeddings_ln = w.ln("embeddings.LayerNorm", h, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            // Fuse query/key/value: [3H, H] weight, [3H] bias.
            let mut wqkv = Vec::with_capacity(3 * h * h);
            let mut bqkv = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                wqkv.extend(w.get(&format!("{p}.attention.self.{part}.weight"), &[h, h])?);
                bqkv.extend(w.get(&format!("{p}.attention.self.{part}.bias"), &[h])?);
            }
            layers.push(BertLayer {
                qkv: Linear::new(Packed::from_linear(&wqkv, 3 * h, h), bqkv),
                attention_output: w.linear(&format!("{p}.attention.output.dense"), h, h)?,
                attention_ln: w.ln(&format!("{p}.attention.output.LayerNorm"), h, eps)?,
                intermediate: w.linear(&format!("{p}.intermediate.dense"), i, h)?,
                output: w.linear(&format!("{p}.output.dense"), h, i)?,
                output_ln: w.ln(&format!("{p}.output.LayerNorm"), h, eps)?,
            });
        }
        Ok(BertModel { config, word_embeddings, position_embeddings, token_type_embeddings, embeddings_ln, layers })
    }

    /// The arithmetic of the linear layers' products ([`Precision`]); the attention products
    /// stay f32. Switching to int8 quantizes the weights once (the f32 ones are kept: the GPU
    /// path uploads them).
    ///
    /// `tokenize` turns the calibration sentences into ids (the smoothing factors come from one
    /// f32 pass over them).
    pub fn set_precision(&mut self, p: Precision, tokenize: &dyn Fn(&str) -> Vec<u32>) {
        if p == Precision::Int8 && self.layers.iter().any(|l| l.qkv.q.is_none()) {
            let seqs: Vec<Vec<u32>> = CALIBRATION.iter().map(|t| tokenize(t)).collect();
            let mut x_max: Vec<Vec<f32>> = Vec::new();
            self.forward_observed(&seqs, &mut |i, x, k| {
                if x_max.len() <= i {
                    x_max.resize(i + 1, Vec::new());
                }
                let m = &mut x_max[i];
                m.resize(k, 0.0);
                for row in x.chunks_exact(k) {
                    for (m, v) in m.iter_mut().zip(row) {
                        *m = m.max(v.abs());
                    }
                }
            });
            for (l, layer) in self.layers.iter_mut().enumerate() {
                for (j, lin) in layer.linears_mut().into_iter().enumerate() {
                    lin.quantize(&x_max[4 * l + j]);
                }
            }
        }
        if p == Precision::F32 {
            self.layers.iter_mut().flat_map(BertLayer::linears_mut).for_each(|lin| lin.q = None);
        }
    }

    /// The linear layers' arithmetic.
    pub fn precision(&self) -> Precision {
        if self.layers.iter().any(|l| l.qkv.q.is_some()) { Precision::Int8 } else { Precision::F32 }
    }

    /// The model's configuration.
    pub fn config(&self) -> &BertConfig {
        &self.config
    }

    /// Last hidden state `[T, H]` of the packed sequences (ids include special tokens; each
    /// sequence at most `max_position_embeddings` long; ids ≥ vocab map to `[UNK]` = 100).
    pub fn forward(&self, seqs: &[Vec<u32>]) -> Vec<f32> {
        self.forward_observed(seqs, &mut |_, _, _| {})
    }

    /// [`BertModel::forward`], showing each linear layer's input `[T, k]` to `observe(index,
    /// input, k)` (index `4·layer + j`, `j`: Q/K/V, attention output, intermediate, output).
    fn forward_observed(&self, seqs: &[Vec<u32>], observe: &mut dyn FnMut(usize, &[f32], usize)) -> Vec<f32> {
        let h = self.config.hidden_size;
        let total: usize = seqs.iter().map(|s| s.len().min(self.config.max_position_embeddings)).sum();
        let mut x = vec![0f32; total * h];
        // BertEmbeddings: word + position + token_type(0), then LayerNorm.
        let mut row = 0;
        for s in seqs {
            for (pos, &id) in s.iter().take(self.config.max_position_embeddings).enumerate() {
                let id = if (id as usize) < self.config.vocab_size { id as usize } else { 100 };
                let dst = &mut x[row * h..(row + 1) * h];
                let we = &self.word_embeddings[id * h..(id + 1) * h];
                let pe = &self.position_embeddings[pos * h..(pos + 1) * h];
                let te = &self.token_type_embeddings[..h];
                dst.copy_from_slice(we);
                ops::add(dst, pe);
                ops::add(dst, te);
                row += 1;
            }
        }
        self.embeddings_ln.forward(&mut x);
        let lens: Vec<usize> = seqs.iter().map(|s| s.len().min(self.config.max_position_embeddings)).collect();
        let mut qkv = Vec::new();
        let mut ctx = vec![0f32; total * h];
        let mut tmp = Vec::new();
        let mut inter = Vec::new();
        let mut s = QuantRows::default();
        let i = self.config.intermediate_size;
        for (l, layer) in self.layers.iter().enumerate() {
            observe(4 * l, &x, h);
            layer.qkv.forward(&x, total, &mut qkv, false, &mut s);
            self.attention(&qkv, &lens, &mut ctx);
            observe(4 * l + 1, &ctx, h);
            layer.attention_output.forward(&ctx, total, &mut tmp, false, &mut s);
            ops::add(&mut x, &tmp);
            layer.attention_ln.forward(&mut x);
            observe(4 * l + 2, &x, h);
            layer.intermediate.forward(&x, total, &mut inter, true, &mut s);
            observe(4 * l + 3, &inter, i);
            layer.output.forward(&inter, total, &mut tmp, false, &mut s);
            ops::add(&mut x, &tmp);
            layer.output_ln.forward(&mut x);
        }
        x
    }

    /// Scaled dot-product attention per sequence and head. `qkv` is `[T, 3H]`, `ctx` `[T, H]`.
    ///
    /// Both products run on the packed GEMM kernel over strided views, with no gather of `Q`
    /// and no scatter of the context: scores `[len, len] = Q_h · K_hᵀ` (`Q_h` read in place with
    /// row stride 3H; `K_hᵀ` packed), a row softmax with the `1/√d` scale folded into the
    /// exponent, then `ctx_h [len, d] = P · V_h` (`V_h` packed) written with row stride H.
    ///
    /// Natively the sequences of a batch run in parallel (rayon; each writes its own rows of
    /// `ctx`); in the page one after another.
    fn attention(&self, qkv: &[f32], lens: &[usize], ctx: &mut [f32]) {
        let h = self.config.hidden_size;
        // Each sequence's rows of `qkv` and of `ctx`.
        let mut parts = Vec::with_capacity(lens.len());
        let (mut start, mut rest) = (0, ctx);
        for &len in lens {
            let (mine, tail) = rest.split_at_mut(len * h);
            parts.push((&qkv[start * 3 * h..(start + len) * 3 * h], len, mine));
            rest = tail;
            start += len;
        }
        #[cfg(not(target_arch = "wasm32"))]
        if parts.len() > 1 {
            use rayon::prelude::*;
            parts.into_par_iter().for_each_init(AttentionScratch::default, |s, (rows, len, out)| self.attention_seq(rows, len, out, s));
            return;
        }
        let mut scratch = AttentionScratch::default();
        for (rows, len, out) in parts {
            self.attention_seq(rows, len, out, &mut scratch);
        }
    }

    /// Attention of one sequence: `rows` is its `[len, 3H]` slice of Q | K | V, `ctx` its
    /// `[len, H]` rows of the context.
    fn attention_seq(&self, rows: &[f32], len: usize, ctx: &mut [f32], s: &mut AttentionScratch) {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        s.scores.resize(len * len, 0.0);
        for head in 0..heads {
            let (qo, ko, vo) = (head * d, h + head * d, 2 * h + head * d);
            s.kt.refill_strided(rows, d, len, ko, 1, 3 * h);
            matmul_strided(&rows[qo..], len, 3 * h, &s.kt, &mut s.scores, len);
            for row in s.scores.chunks_exact_mut(len) {
                ops::softmax(row, scale);
            }
            s.v.refill_strided(rows, len, d, vo, 3 * h, 1);
            matmul_strided(&s.scores, len, len, &s.v, &mut ctx[head * d..], h);
        }
    }

    /// Sentence embeddings: mean of the last hidden state over each sequence's tokens (all are
    /// attended: no padding in a packed batch), then L2 normalisation. `[B][H]`.
    pub fn embed(&self, seqs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        self.embed_pooled(seqs, &[]).into_iter().map(|(v, _)| v).collect()
    }

    /// [`BertModel::embed`], and from the same forward pass the vector of each of a sequence's
    /// `pools` (token positions, `[CLS]` = 0; positions past the sequence are skipped): the mean
    /// of the last hidden state over those positions, L2-normalised — late chunking (Günther et
    /// al. 2024, arXiv 2409.04701 §3). `pools[b]` belongs to `seqs[b]`; missing entries are empty.
    pub fn embed_pooled(&self, seqs: &[Vec<u32>], pools: &[Vec<Vec<usize>>]) -> Vec<super::PooledVectors> {
        if seqs.is_empty() {
            return Vec::new();
        }
        let h = self.config.hidden_size;
        let x = self.forward(seqs);
        let mean = |rows: &mut dyn Iterator<Item = usize>| {
            let mut v = vec![0f32; h];
            let mut n = 0usize;
            for r in rows {
                for (a, b) in v.iter_mut().zip(&x[r * h..(r + 1) * h]) {
                    *a += b;
                }
                n += 1;
            }
            v.iter_mut().for_each(|a| *a /= n.max(1) as f32);
            let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-12);
            v.iter_mut().for_each(|a| *a /= norm);
            v
        };
        let mut out = Vec::with_capacity(seqs.len());
        let mut row = 0;
        for (b, s) in seqs.iter().enumerate() {
            let len = s.len().min(self.config.max_position_embeddings);
            let whole = mean(&mut (row..row + len));
            let parts = pools
                .get(b)
                .map_or(&[][..], |p| p.as_slice())
                .iter()
                .map(|p| mean(&mut p.iter().filter(|&&t| t < len).map(|&t| row + t)))
                .collect();
            out.push((whole, parts));
            row += len;
        }
        out
    }
}
