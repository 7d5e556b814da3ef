// GELU (erf form), shared by the matmul kernels (the host appends this file to each).

// erf(x) = x · P(x²) / Q(x²), x clamped to [-4, 4]; the same fit as the CPU path
// (src/embed/ops.rs), max abs error 4.2e-7.
fn erf(x0: f32) -> f32 {
    let x = clamp(x0, -4.0, 4.0);
    let z = x * x;
    let num = 1.1283787 + z * (0.21392831 + z * (0.052431476 + z * (0.0042924302 + z * (0.00015552716 + z * (-1.9904234e-6 + z * 1.9220128e-8)))));
    let den = 1.0 + z * (0.5229167 + z * (0.120792996 + z * (0.015549804 + z * 0.001097903)));
    return x * num / den;
}

fn gelu(x: f32) -> f32 {
    return 0.5 * x * (1.0 + erf(x * 0.70710678));
}
