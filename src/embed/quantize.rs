//! Smaller weight files for the query encoder a page downloads: `model.safetensors` rewritten
//! with int8 matrices (one f32 scale per row) or as f16. [`super::bert::BertModel`] loads either
//! back to f32, so the forward pass, the CPU kernels and the GPU path are unchanged; only the
//! download shrinks (all-MiniLM-L6-v2: 90.9 MB f32 → about 23 MB int8, 45 MB f16).
//!
//! int8 layout (symmetric per-row quantization, as for the static snapshot's vectors,
//! [`quantize_i8`]): a 2-d tensor `name` of shape `[rows, cols]` with at least
//! [`MIN_ELEMENTS`] values is stored as dtype `I8` under `name`, with its scales as `F32` `[rows]`
//! under `name` + [`SCALE_SUFFIX`] (`…weight_scale`, the compressed-tensors naming); the weight is
//! `w[r][c] ≈ scale[r] · q[r][c]`, `|q| ≤ 127`. Biases, LayerNorm parameters and small tensors
//! stay as they were. The metadata key [`FORMAT_KEY`] records the format. The output is a function of
//! the input's bytes (the same file natively and from the package's `npx webrag quantize`).
//!
//! The recall cost of each format is measured by `webrag eval --query-model DIR` (queries
//! embedded by the quantized model, passages by the full one), its closeness to the f32 model by
//! `webrag quantize` (cosine on a few sentences) and `tests/golden.rs`.
use std::collections::HashMap;
use std::str::FromStr;

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

use super::vecmath::quantize_i8;
use crate::error::{InputError, ModelError, Result};

/// Suffix of the scale tensor of an int8 matrix: `embeddings.word_embeddings.weight_scale`.
pub const SCALE_SUFFIX: &str = "_scale";

/// Smallest tensor (in values) that int8 quantizes: smaller ones (token-type embeddings) stay.
pub const MIN_ELEMENTS: usize = 4096;

/// Safetensors metadata key naming the weight format (`int8-per-row` or `f16`).
pub const FORMAT_KEY: &str = "webrag.weights";

/// The formats `webrag quantize` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    /// Symmetric int8 per row of each matrix, f32 scales (about a quarter of f32's bytes).
    Int8,
    /// Every floating-point tensor as IEEE half precision (half of f32's bytes).
    F16,
}

impl WeightFormat {
    /// The name used on the command line and in [`FORMAT_KEY`].
    pub fn name(self) -> &'static str {
        match self {
            WeightFormat::Int8 => "int8-per-row",
            WeightFormat::F16 => "f16",
        }
    }
}

impl FromStr for WeightFormat {
    type Err = InputError;
    fn from_str(s: &str) -> std::result::Result<Self, InputError> {
        match s {
            "int8" | "int8-per-row" => Ok(WeightFormat::Int8),
            "f16" => Ok(WeightFormat::F16),
            other => Err(InputError::InvalidOption { name: "format".into(), reason: format!("{other:?}: expected int8 or f16") }),
        }
    }
}

/// A tensor's values as f32, for the floating-point dtypes (`None` for others).
fn floats(t: &TensorView<'_>) -> Option<Vec<f32>> {
    let d = t.data();
    Some(match t.dtype() {
        Dtype::F32 => d.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::F16 => d.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::BF16 => d.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        _ => return None,
    })
}

/// Rewrites a safetensors file in `format`. Tensors that are not floating point (and scale
/// tensors of an already int8 file) are copied as they are.
///
/// Errors: [`ModelError::CorruptWeights`] (not a safetensors file, or the result cannot be
/// written).
pub fn quantize_weights(bytes: &[u8], format: WeightFormat) -> Result<Vec<u8>> {
    let corrupt = |e: safetensors::SafeTensorError| ModelError::CorruptWeights { reason: e.to_string() };
    let st = SafeTensors::deserialize(bytes).map_err(corrupt)?;
    // Owned (dtype, shape, bytes) per output tensor, then views over them.
    let mut out: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, t) in st.iter() {
        let shape = t.shape().to_vec();
        let Some(v) = floats(&t) else {
            out.push((name.to_string(), t.dtype(), shape, t.data().to_vec()));
            continue;
        };
        match format {
            WeightFormat::Int8 if shape.len() == 2 && v.len() >= MIN_ELEMENTS && shape[1] > 0 => {
                let mut q = Vec::with_capacity(v.len());
                let mut scales = Vec::with_capacity(shape[0] * 4);
                for row in v.chunks_exact(shape[1]) {
                    let (s, r) = quantize_i8(row);
                    scales.extend_from_slice(&s.to_le_bytes());
                    q.extend(r.into_iter().map(|x| x as u8));
                }
                out.push((format!("{name}{SCALE_SUFFIX}"), Dtype::F32, vec![shape[0]], scales));
                out.push((name.to_string(), Dtype::I8, shape, q));
            }
            // The rest, and an int8 file's scales (which stay F32 in either format).
            WeightFormat::Int8 => {
                let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                out.push((name.to_string(), Dtype::F32, shape, b));
            }
            WeightFormat::F16 if name.ends_with(SCALE_SUFFIX) && t.dtype() == Dtype::F32 => {
                out.push((name.to_string(), Dtype::F32, shape, t.data().to_vec()));
            }
            WeightFormat::F16 => {
                let b = v.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect();
                out.push((name.to_string(), Dtype::F16, shape, b));
            }
        }
    }
    let views = out
        .iter()
        .map(|(n, d, s, b)| TensorView::new(*d, s.clone(), b).map(|v| (n.clone(), v)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(corrupt)?;
    // One metadata entry: the header is then the same bytes on every run (a map's order is not).
    let meta = HashMap::from([(FORMAT_KEY.to_string(), format.name().to_string())]);
    Ok(safetensors::serialize(views, Some(meta)).map_err(corrupt)?)
}

/// The f32 values of `t` (named `name` in `st`), dequantizing an int8 matrix with its
/// [`SCALE_SUFFIX`] tensor. `None` for a dtype this engine does not load.
///
/// Errors: [`ModelError::TensorMissing`] (an int8 tensor without its scales),
/// [`ModelError::TensorShape`] (scales that are not `F32 [rows]`, an int8 tensor that is not 2-d).
pub(crate) fn dequantize(st: &SafeTensors<'_>, name: &str, t: &TensorView<'_>) -> Result<Option<Vec<f32>>> {
    if t.dtype() != Dtype::I8 {
        return Ok(floats(t));
    }
    let scale_name = format!("{name}{SCALE_SUFFIX}");
    let s = st.tensor(&scale_name).map_err(|_| ModelError::TensorMissing { name: scale_name.clone() })?;
    let shape = t.shape();
    let rows = shape.first().copied().unwrap_or(0);
    if shape.len() != 2 || s.dtype() != Dtype::F32 || s.shape() != [rows] {
        return Err(ModelError::TensorShape {
            name: scale_name,
            expected: vec![rows],
            found: s.shape().to_vec(),
            dtype: format!("{:?} scales of an {:?} {shape:?} tensor", s.dtype(), t.dtype()),
        }
        .into());
    }
    let cols = shape[1].max(1);
    let scales: Vec<f32> = s.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    Ok(Some(t.data().chunks(cols).zip(&scales).flat_map(|(row, &sc)| row.iter().map(move |&q| sc * f32::from(q as i8))).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let views: Vec<(String, TensorView<'_>)> =
            tensors.iter().map(|(n, d, s, b)| (n.to_string(), TensorView::new(*d, s.clone(), b).expect("view"))).collect();
        safetensors::serialize(views, None).expect("serialize")
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn int8_round_trip_within_half_a_step_per_row() {
        let (rows, cols) = (64, 96);
        let w: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * (1 + i / cols) as f32).collect();
        let bias = vec![0.5f32; rows];
        let src = file(&[("m.weight", Dtype::F32, vec![rows, cols], f32s(&w)), ("m.bias", Dtype::F32, vec![rows], f32s(&bias))]);
        let q = quantize_weights(&src, WeightFormat::Int8).expect("quantize");
        assert!(q.len() < src.len() / 3, "{} vs {}", q.len(), src.len());
        let st = SafeTensors::deserialize(&q).expect("read");
        let t = st.tensor("m.weight").expect("weight");
        assert_eq!(t.dtype(), Dtype::I8);
        let back = dequantize(&st, "m.weight", &t).expect("ok").expect("floats");
        for (r, (a, b)) in w.chunks(cols).zip(back.chunks(cols)).enumerate() {
            let step = a.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0;
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() <= step / 2.0 + 1e-6, "row {r}: {x} vs {y}");
            }
        }
        // The bias (1-d) is kept as f32.
        let b = st.tensor("m.bias").expect("bias");
        assert_eq!(b.dtype(), Dtype::F32);
        let (_, meta) = SafeTensors::read_metadata(&q).expect("meta");
        assert_eq!(meta.metadata().as_ref().and_then(|m| m.get(FORMAT_KEY)).map(String::as_str), Some("int8-per-row"));
    }

    #[test]
    fn f16_halves_the_floats() {
        let w: Vec<f32> = (0..4096).map(|i| i as f32 / 4096.0).collect();
        let src = file(&[("m.weight", Dtype::F32, vec![64, 64], f32s(&w))]);
        let q = quantize_weights(&src, WeightFormat::F16).expect("quantize");
        let st = SafeTensors::deserialize(&q).expect("read");
        let t = st.tensor("m.weight").expect("weight");
        assert_eq!(t.dtype(), Dtype::F16);
        let back = dequantize(&st, "m.weight", &t).expect("ok").expect("floats");
        assert!(w.iter().zip(&back).all(|(a, b)| (a - b).abs() <= 1e-3));
    }

    #[test]
    fn broken_int8_files_are_typed_errors() {
        let q = vec![1u8; 64 * 64];
        // No scales.
        let bytes = file(&[("m.weight", Dtype::I8, vec![64, 64], q.clone())]);
        let st = SafeTensors::deserialize(&bytes).expect("read");
        let e = dequantize(&st, "m.weight", &st.tensor("m.weight").expect("t")).unwrap_err();
        assert!(e.to_string().contains("m.weight_scale is missing"), "{e}");
        // Scales of the wrong length and of the wrong dtype.
        for (d, s) in [(Dtype::F32, vec![63usize]), (Dtype::F16, vec![64])] {
            let n = s[0] * d.bitsize() / 8;
            let bytes = file(&[("m.weight", Dtype::I8, vec![64, 64], q.clone()), ("m.weight_scale", d, s, vec![0; n])]);
            let st = SafeTensors::deserialize(&bytes).expect("read");
            let e = dequantize(&st, "m.weight", &st.tensor("m.weight").expect("t")).unwrap_err();
            assert!(e.to_string().contains("m.weight_scale"), "{e}");
        }
        // A 1-d int8 tensor.
        let bytes = file(&[("m.weight", Dtype::I8, vec![64], vec![1; 64]), ("m.weight_scale", Dtype::F32, vec![64], vec![0; 256])]);
        let st = SafeTensors::deserialize(&bytes).expect("read");
        assert!(dequantize(&st, "m.weight", &st.tensor("m.weight").expect("t")).is_err());
        // Not a safetensors file.
        assert!(quantize_weights(b"not safetensors", WeightFormat::Int8).is_err());
        assert!("int4".parse::<WeightFormat>().is_err());
    }
}
