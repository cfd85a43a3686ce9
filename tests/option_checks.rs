//! Every bad option value is refused with exit 2 and a message naming the option, before any work starts; none
//! makes the harness panic.

use std::process::Command;

fn fuzz(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz")).arg("fuzz").args(args).output().unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn bad_option_values_are_refused_before_any_work() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-options-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let (file, dir_text) = (file.display().to_string(), dir.display().to_string());
    let report = format!("{dir_text}/report.json");
    let refused: [(&[&str], &str); 10] = [
        (&["--time", "1e20"], "--time"),
        (&["--time", "0"], "--time"),
        (&["--time", "NaN"], "--time"),
        (&["--shrink-time", "18446744073709551615"], "--shrink-time"),
        (&["--timeout", "18446744073709551615"], "--timeout"),
        (&["--settle", "18446744073709551615"], "--settle"),
        (&["--jobs", "10000"], "--jobs"),
        (&["--jobs", "0"], "--jobs"),
        (&["--out", &file], "is not a folder"),
        (&["--json", &dir_text], "is a folder"),
    ];
    for (args, message) in refused {
        let out: &[&str] = if args[0] == "--out" { &[] } else { &["--out", &dir_text] };
        let (code, stderr) = fuzz(&[&["--cases", "1"][..], out, args].concat());
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message) && !stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("server model"), "{args:?}: work started: {stderr}");
    }
    // A reply timeout of 0 is raised to the floor, with a warning; the run goes on.
    let (code, stderr) =
        fuzz(&["--cases", "1", "--timeout", "0", "--settle", "0", "--out", &dir_text, "--json", &report]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("warning: --timeout 0") && stderr.contains("warning: --settle 0"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
