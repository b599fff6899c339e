//! The stream-ordered host API (`*_on_stream`): the files its helper kernels and its typed test
//! are expanded into. The names themselves are rows of `table.rs` (CORE and the
//! `{T}_{op}_reduce_on_stream` family) and go through `emit.rs` like every other host name.

use super::emit::{C_BANNER, entries};
use super::table::*;
use super::tests;
use std::fmt::Write as _;

/// The (type, op) pairs of `rocshmem_ctx_<T>_<op>_reduce_on_stream`, in table order.
fn reductions() -> Vec<(&'static Ty, &'static str)> {
    entries()
        .into_iter()
        .filter(|e| e.fam.name == "{T}_{op}_reduce_on_stream")
        .map(|e| (e.ty, e.op.expect("reductions have an op").0))
        .collect()
}

/// `device/stream/gen/reduce_list.inc`: `X(C++ type, type name, op name, ROCSHMEM_OP)` per reduction.
pub fn reduce_list() -> String {
    let mut s = String::from(C_BANNER);
    s.push_str("/* The typed reduce_on_stream helper kernels: X(C++ type, type name, op, ROCSHMEM_OP). */\n");
    for (t, op) in reductions() {
        let _ = writeln!(s, "X({}, {}, {op}, {})", t.cxx, t.name, op_enum(op));
    }
    s
}

/// `device/gen/api_stream.cpp`: upstream's public helper kernels (`rocshmem_*_kernel`, and the
/// body of the template `rocshmem_reduce_on_stream_kernel` instantiated for every reduction) on GPU builds
/// of the device library. The host platform has no `__global__`: there the core runs the same
/// bodies (device/stream/host_launch.cpp).
pub fn api_stream() -> String {
    let mut s = String::from(C_BANNER);
    s.push_str(
        "// Upstream's public helper kernels of the *_on_stream calls, over device/stream/kernels.hpp.\n\
         #include \"../stream/kernels.hpp\"\n\n#if ROCSHMEM_GPU_COMPILE\nnamespace rocshmem {\n\n",
    );
    for (decl, body) in STREAM_KERNELS {
        let _ = writeln!(
            s,
            "__global__ {decl} {{\n  using namespace ::rocshmem::dev::stream;\n  rocshmem_stream_args A{{}};\n  {body};\n}}"
        );
    }
    s.push_str(
        "\n// The body of the reductions' helper kernel, which rocshmem_HOST.hpp defines (so a program's\n\
         // device link keeps only the reductions it launches).\n\
         template <typename T, ROCSHMEM_OP Op>\n__device__ void rocshmemi_reduce_on_stream(rocshmem_team_t team, T *dest, const T *source, int nreduce) {\n  \
         rocshmem_stream_args A{};\n  A.team = team;\n  A.dest = dest;\n  A.source = source;\n  A.count = uint64_t(nreduce);\n  \
         ::rocshmem::dev::stream::k_reduce<T, Op>(A);\n}\n\n",
    );
    // The <stdint.h>/<stddef.h> types are typedefs of the base integer types (LP64 Linux), so
    // instantiating the base types covers them (an instantiation per name would be a duplicate).
    for (t, op) in reductions().into_iter().filter(|(t, _)| !t.cxx.ends_with("_t")) {
        let _ = writeln!(
            s,
            "template __device__ void rocshmemi_reduce_on_stream<{0}, {1}>(rocshmem_team_t, {0} *, const {0} *, int);",
            t.cxx,
            op_enum(op)
        );
    }
    s.push_str("\n}  // namespace rocshmem\n#endif  // ROCSHMEM_GPU_COMPILE\n");
    s
}

/// One reduction on streams: world and the even PEs, sizes 1 and 300 and 257 in place, on a
/// created stream and on the default (NULL) one; checked on every member after synchronize.
const RED: &str = r#"
static void ros_{n}_{op}(void) {
  enum { MAXN = 300 };
  tt_{n} *src = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} *dst = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} want[MAXN];
  REQUIRE(src && dst, "{n}: malloc");
  team_view v[2];
  int nv = team_views(v);
  static const int sizes[] = {1, MAXN, 257};
  for (int t = 0; t < nv; t++) {
    for (int si = 0; si < 3; si++) {
      int in_place = si == 2, n = sizes[si];
      void *stream = (si == 1) ? NULL : created;
      uint64_t salt = 0x700000u + (uint64_t)OP_ID * 256 + (uint64_t)t * 16 + (uint64_t)si;
      for (int m = 0; m < v[t].size; m++) {
        uint64_t s = tu_stream(seed, v[t].start + m * v[t].stride, salt);
        for (int i = 0; i < n; i++) {
          tt_{n} x = red_{n}(&s, IS_PROD);
          want[i] = m == 0 ? x : {op}_{n}(want[i], x);
        }
      }
      uint64_t s = tu_stream(seed, me, salt);
      for (int i = 0; i < n; i++) { src[i] = red_{n}(&s, IS_PROD); dst[i] = small_{n}(0); }
      tt_{n} *out = in_place ? src : dst;
      int rc = rocshmem_ctx_{n}_{op}_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, v[t].team, out, src, n, stream);
      CHECK(rc == 0, "{n} {op}_reduce_on_stream returned %d", rc);
      REQUIRE(rocshmem_host_stream_synchronize(stream) == 0, "{n} {op}: stream synchronize");
      for (int i = 0; i < n; i++) {
        if (!same_{n}(out[i], want[i])) {
          CHECK(0, "{n} {op}_reduce_on_stream team %d nreduce %d%s: element %d is %g, want %g", t, n, in_place ? " in place" : "", i, show_{n}(out[i]), show_{n}(want[i]));
          break;
        }
      }
    }
  }
  destroy_views(v, nv);
  rocshmem_barrier_all();
  rocshmem_free(dst);
  rocshmem_free(src);
}
"#;

/// `ctests/gen/typed_reduce_on_stream.c`: every typed reduce_on_stream name on the host
/// platform's ordered queues, checked on every member.
pub fn typed_test() -> String {
    let mut body = String::from("\nstatic void *created;\n");
    body.push_str(tests::COLL_HEAD);
    let mut calls = vec!["open_stream".to_string()];
    body.push_str(
        "\nstatic void open_stream(void) { REQUIRE(rocshmem_host_stream_create(&created) == 0, \"stream create\"); }\n",
    );
    let mut last = ("", 0usize);
    for (t, op) in reductions() {
        let idx = if last.0 == t.name { last.1 + 1 } else { 0 };
        last = (t.name, idx);
        body.push_str(&tests::red_fn(RED, t, op, idx));
        calls.push(format!("ros_{}_{op}", t.name));
    }
    body.push_str(
        "\nstatic void close_stream(void) { REQUIRE(rocshmem_host_stream_destroy(created) == 0, \"stream destroy\"); }\n",
    );
    calls.push("close_stream".into());
    tests::program("typed_reduce_on_stream", &body, &calls)
}
