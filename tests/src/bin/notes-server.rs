//! The notes service's binary, for the black-box tests that run it as a process: the same
//! command line as `notes` (`notes::cli`), built here because a test can only name binaries of
//! its own package.

fn main() -> std::process::ExitCode {
    notes::cli::main()
}
