// BERT input embeddings, before their LayerNorm:
//   x[t, :] = word[ids[t], :] + position[pos[t], :] + token_type[0, :]
// ids, pos: [T] u32 (ids ≥ vocab read as [UNK] = 100, as the CPU path does); word: [V, H];
// position: [P, H]; token_type: [2, H]; x: [T, H]. Dispatch: (ceil(T · H / 256), 1, 1) of 256.

struct Params {
    tokens: u32,
    hidden: u32,
    vocab: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read> pos: array<u32>;
@group(0) @binding(3) var<storage, read> word: array<f32>;
@group(0) @binding(4) var<storage, read> position: array<f32>;
@group(0) @binding(5) var<storage, read> token_type: array<f32>;
@group(0) @binding(6) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.tokens * p.hidden) {
        return;
    }
    let t = i / p.hidden;
    let j = i % p.hidden;
    var id = ids[t];
    if (id >= p.vocab) {
        id = 100u;
    }
    x[i] = word[id * p.hidden + j] + position[pos[t] * p.hidden + j] + token_type[j];
}
