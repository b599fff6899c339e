//! Tables of C functions resolved at run time (dlopen/dlsym), so that librocshmem has no
//! link-time dependency on the libraries behind them: the CUDA runtime and driver
//! (`gpu/cuda.rs`), the HIP runtime (`gpu/vendor.rs`), MPI (`backend/mpi.rs`) and rdma-core
//! (`transport/gda/verbs.rs`).
//!
//! [`fn_table!`] declares one table: a struct of typed function pointers and its `load_with`,
//! which resolves every symbol through a lookup the caller gives (a library's [`symbol`], MPI's
//! symbol scope) and returns that lookup's error, which names the library and the symbol, for
//! the first one missing.

use libloading::Library;
use std::ffi::c_void;

/// The address of `name` in `lib`. A null address (possible for a symbol on Linux) counts as
/// missing, so a table never holds a null function pointer.
pub fn symbol(lib: &Library, name: &str) -> Result<*mut c_void, libloading::Error> {
    // SAFETY: looked up as an untyped address; the caller casts it to the symbol's C type.
    let p = *unsafe { lib.get::<*mut c_void>(name.as_bytes()) }?;
    if p.is_null() { Err(libloading::Error::DlSymUnknown) } else { Ok(p) }
}

/// `fn_table!(pub struct Name { field = "c_symbol": fn(args) -> ret; ... })`: the struct (each
/// field an `unsafe extern "C" fn` of that signature) and
/// `unsafe fn load_with(find: impl FnMut(&'static str) -> Result<*mut c_void, E>) -> Result<Name, E>`,
/// whose caller promises that every symbol `find` returns has the C signature declared for it.
macro_rules! fn_table {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $( $(#[$fmeta:meta])* $fvis:vis $field:ident = $sym:literal : fn($($arg:ty),* $(,)?) $(-> $ret:ty)?; )*
    }) => {
        $(#[$meta])*
        #[allow(clippy::type_complexity)]
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: unsafe extern "C" fn($($arg),*) $(-> $ret)?, )*
        }

        impl $name {
            /// Resolves every function with `find` (its address by C name); the first error
            /// `find` returns ends the load.
            ///
            /// # Safety
            /// Every address `find` returns must be the named function, of the declared C type.
            #[allow(dead_code)]
            $vis unsafe fn load_with<E>(
                mut find: impl FnMut(&'static str) -> ::std::result::Result<*mut ::std::ffi::c_void, E>,
            ) -> ::std::result::Result<$name, E> {
                Ok($name {
                    $( $field: {
                        let p = find($sym)?;
                        // SAFETY: the caller's contract: `p` is this function, of this C type.
                        unsafe {
                            ::std::mem::transmute::<*mut ::std::ffi::c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(p)
                        }
                    }, )*
                })
            }
        }
    };
}
pub(crate) use fn_table;

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{c_char, c_int};

    fn_table!(struct Libc {
        strlen = "strlen": fn(*const c_char) -> usize;
        abs = "abs": fn(c_int) -> c_int;
    });

    fn_table!(
        #[allow(dead_code)]
        struct Missing {
            strlen = "strlen": fn(*const c_char) -> usize;
            nothing = "rocshmem_no_such_function": fn();
        }
    );

    #[test]
    fn a_table_resolves_and_calls() {
        // SAFETY: loading libc runs nothing new (it is loaded already).
        let lib = unsafe { Library::new("libc.so.6") }.unwrap();
        // SAFETY: both have these C signatures in libc.
        let t = unsafe { Libc::load_with(|s| symbol(&lib, s)) }.unwrap();
        // SAFETY: a NUL-terminated string; a plain int.
        unsafe {
            assert_eq!((t.strlen)(c"rocshmem".as_ptr()), 8);
            assert_eq!((t.abs)(-7), 7);
        }
    }

    #[test]
    fn the_first_missing_symbol_is_the_error() {
        // SAFETY: as above.
        let lib = unsafe { Library::new("libc.so.6") }.unwrap();
        // SAFETY: strlen has this type; the other is never found.
        let e = unsafe { Missing::load_with(|s| symbol(&lib, s).map_err(|e| format!("libc.so.6 has no {s}: {e}"))) };
        let e = e.err().unwrap();
        assert!(e.starts_with("libc.so.6 has no rocshmem_no_such_function: "), "{e}");
    }
}
