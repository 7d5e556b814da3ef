//! A tiny deterministic generator (xorshift64) for benchmark and test data. Never for anything
//! that needs real randomness.

/// xorshift64 state (must not be 0).
#[derive(Debug, Clone)]
pub struct XorShift(pub u64);

impl XorShift {
    /// Uniform in `[-0.5, 0.5)`.
    pub fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
    /// A random L2-normalised vector.
    pub fn unit(&mut self, dim: usize) -> Vec<f32> {
        self.unit_near(&vec![0.0; dim], 1.0)
    }
    /// `centre + noise · uniform`, L2-normalised.
    pub fn unit_near(&mut self, centre: &[f32], noise: f32) -> Vec<f32> {
        let mut v: Vec<f32> = centre.iter().map(|x| x + noise * self.next_f32()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}
