//! Which server commands are Python programs, told from the command line and the program's first bytes (no shell,
//! nothing run): an interpreter (`python`, `python3`, `python3.X`) with a script or `-m module`, or an executable
//! whose shebang names one: a console script of an installed package, a script starting `#!/usr/bin/env python3`,
//! or pip's `#!/bin/sh` launcher for an interpreter path too long for a shebang; each also behind `env NAME=VALUE`. A program that is neither (`-c`,
//! standard input, another interpreter) is not one. The fork server (`fork.rs`) runs what this finds.

use crate::server::ServerCommand;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How many bytes of an executable are read for its shebang (Linux reads 256; pip's launcher takes two lines).
const HEAD_BYTES: u64 = 512;

/// A Python program as its command starts it: the interpreter with its options, what it runs, and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonProgram {
    /// The interpreter (a path, or a name looked up on PATH) and the options given to it before the program.
    pub interpreter: Vec<String>,
    /// What the interpreter runs.
    pub main: Main,
    /// The program's own arguments.
    pub args: Vec<String>,
    /// The variables an `env NAME=VALUE ...` before it sets in its environment.
    pub env: Vec<(String, String)>,
}

/// What a Python interpreter runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Main {
    /// A script file (a console script is one), as the command names it.
    Script(PathBuf),
    /// A module, as `-m` runs it.
    Module(String),
}

/// The Python program `command` starts, if it is one (the program looked up on the harness's PATH).
pub fn python_program(command: &ServerCommand) -> Option<PythonProgram> {
    detect(command, std::env::var_os("PATH").as_deref())
}

fn detect(command: &ServerCommand, path: Option<&OsStr>) -> Option<PythonProgram> {
    if Path::new(&command.program).file_name() == Some(OsStr::new("env")) {
        return through_env(&command.args, path);
    }
    if is_python(&command.program) {
        return interpreter_command(vec![command.program.clone()], &command.args);
    }
    let file = resolve(&command.program, path)?;
    let mut head = Vec::new();
    std::fs::File::open(&file).ok()?.take(HEAD_BYTES).read_to_end(&mut head).ok()?;
    let mut shebang = shebang(&head)?;
    if !is_python(shebang.first()?) {
        return None;
    }
    // What the kernel runs: the interpreter, the shebang's argument, the file as found, the command's arguments.
    let interpreter = vec![shebang.remove(0)];
    let rest: Vec<String> =
        shebang.into_iter().chain([file.to_string_lossy().into_owned()]).chain(command.args.iter().cloned()).collect();
    interpreter_command(interpreter, &rest)
}

/// The Python program `env` runs with arguments `args` (`NAME=VALUE`... then the command), with those variables;
/// `None` when `env` is given an option (`-i`, `-u NAME`, `-S`: what it would run is not read here) or no command.
fn through_env(args: &[String], path: Option<&OsStr>) -> Option<PythonProgram> {
    let at = args.iter().position(|arg| !arg.contains('=') || arg.starts_with('='))?;
    if args[at].starts_with('-') {
        return None;
    }
    let env = args[..at].iter().filter_map(|pair| pair.split_once('=')).map(|(k, v)| (k.into(), v.into())).collect();
    let program = detect(&ServerCommand::from_argv(&args[at..]).ok()?, path)?;
    Some(PythonProgram { env, ..program })
}

/// Whether `program`'s file name is a CPython interpreter's: `python`, `python3` or `python3.X`.
fn is_python(program: &str) -> bool {
    let name = Path::new(program).file_name().and_then(OsStr::to_str).unwrap_or("");
    match name.strip_prefix("python3.") {
        Some(minor) => !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()),
        None => name == "python" || name == "python3",
    }
}

/// The program an interpreter runs with arguments `rest` (its options first, as CPython reads them): a script or
/// `-m MODULE`; `None` for `-c`, standard input, an interactive interpreter or an option that runs nothing.
fn interpreter_command(mut interpreter: Vec<String>, rest: &[String]) -> Option<PythonProgram> {
    let mut at = 0;
    while let Some(arg) = rest.get(at) {
        at += 1;
        if arg == "--check-hash-based-pycs" {
            interpreter.extend([arg.clone(), rest.get(at)?.clone()]);
            at += 1;
            continue;
        }
        if arg == "-" || arg.starts_with("--") {
            return None; // standard input, `--help`, `--version` and their like
        }
        let Some(flags) = arg.strip_prefix('-') else {
            let args = rest[at..].to_vec();
            return Some(PythonProgram { interpreter, main: Main::Script(arg.into()), args, env: Vec::new() });
        };
        // A cluster of one-letter options: the first that takes a value takes the rest of the cluster, or the next
        // argument.
        let Some(index) = flags.find(['c', 'm', 'W', 'X', 'h', 'V', '?']) else {
            interpreter.push(arg.clone());
            continue;
        };
        let (before, option) = flags.split_at(index);
        let (letter, attached) = option.split_at(1);
        if !before.is_empty() {
            interpreter.push(format!("-{before}"));
        }
        if !matches!(letter, "m" | "W" | "X") {
            return None; // -c runs a string; -h, -V and -? run nothing
        }
        let value = match attached {
            "" => {
                at += 1;
                rest.get(at - 1)?.clone()
            }
            attached => attached.to_string(),
        };
        if letter == "m" {
            let args = rest[at..].to_vec();
            return Some(PythonProgram { interpreter, main: Main::Module(value), args, env: Vec::new() });
        }
        interpreter.extend([format!("-{letter}"), value]);
    }
    None
}

/// The interpreter a script's first line names, with its arguments: `#!PATH [ARG]` (the kernel's reading: one
/// argument, the rest of the line); `#!/usr/bin/env NAME` or `#!/usr/bin/env -S NAME ARGS...`; or pip's launcher,
/// `#!/bin/sh` then `'''exec' INTERPRETER "$0" "$@"`.
fn shebang(head: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(head.strip_prefix(b"#!")?);
    let mut lines = text.split('\n');
    let line = lines.next()?.trim();
    let (program, argument) = match line.split_once([' ', '\t']) {
        Some((program, argument)) => (program, Some(argument.trim()).filter(|a| !a.is_empty())),
        None => (line, None),
    };
    let name = Path::new(program).file_name().and_then(OsStr::to_str)?;
    match (name, argument) {
        ("env", Some(argument)) => match argument.strip_prefix("-S") {
            Some(words) => {
                Some(words.split_whitespace().map(str::to_string).collect()).filter(|w: &Vec<_>| !w.is_empty())
            }
            None if argument.contains([' ', '\t']) => None, // env looks for a program named with the spaces
            None => Some(vec![argument.to_string()]),
        },
        ("sh", None) => {
            let launcher = lines.next()?.strip_prefix("'''exec' ")?.strip_suffix(r#" "$0" "$@""#)?;
            let interpreter = launcher.strip_prefix('"').and_then(|l| l.strip_suffix('"')).unwrap_or(launcher);
            Some(vec![interpreter.to_string()])
        }
        (_, argument) => Some(std::iter::once(program.to_string()).chain(argument.map(str::to_string)).collect()),
    }
}

/// The file `program` names: a path as given (with a `/`), else the first executable file of that name in `path`'s
/// folders (an empty entry is the current folder), as `execvp` finds it.
fn resolve(program: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let executable = |file: &Path| file.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    std::env::split_paths(path?)
        .map(|folder| if folder.as_os_str().is_empty() { PathBuf::from(program) } else { folder.join(program) })
        .find(|file| executable(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn command(argv: &[&str]) -> ServerCommand {
        ServerCommand::from_argv(&argv.iter().map(|a| a.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn program(interpreter: &[&str], main: Main, args: &[&str]) -> Option<PythonProgram> {
        Some(PythonProgram { interpreter: strings(interpreter), main, args: strings(args), env: Vec::new() })
    }

    fn script(path: &str) -> Main {
        Main::Script(PathBuf::from(path))
    }

    #[test]
    fn an_interpreter_with_a_script_or_a_module_is_a_python_program() {
        let found = |argv: &[&str]| detect(&command(argv), None);
        assert_eq!(
            found(&["python3", "server.py", "--port", "1"]),
            program(&["python3"], script("server.py"), &["--port", "1"])
        );
        assert_eq!(found(&[".venv/bin/python", "s.py"]), program(&[".venv/bin/python"], script("s.py"), &[]));
        assert_eq!(
            found(&["/usr/bin/python3.11", "-u", "s.py"]),
            program(&["/usr/bin/python3.11", "-u"], script("s.py"), &[])
        );
        assert_eq!(
            found(&["python", "-m", "pkg.server", "-v"]),
            program(&["python"], Main::Module("pkg.server".into()), &["-v"])
        );
        assert_eq!(found(&["python3", "-um", "srv"]), program(&["python3", "-u"], Main::Module("srv".into()), &[]));
        assert_eq!(found(&["python3", "-msrv", "x"]), program(&["python3"], Main::Module("srv".into()), &["x"]));
        assert_eq!(
            found(&["python3", "-W", "ignore", "-X", "dev", "-I", "s.py"]),
            program(&["python3", "-W", "ignore", "-X", "dev", "-I"], script("s.py"), &[])
        );
        assert_eq!(found(&["python3", "-Wignore", "s.py"]), program(&["python3", "-W", "ignore"], script("s.py"), &[]));
    }

    #[test]
    fn a_python_program_behind_env_carries_its_variables_and_env_with_an_option_is_not_read() {
        let behind = detect(&command(&["/usr/bin/env", "HOME=/tmp/h", "A=b=c", "python3", "-u", "s.py", "x"]), None);
        let expected = program(&["python3", "-u"], script("s.py"), &["x"])
            .map(|p| PythonProgram { env: vec![("HOME".into(), "/tmp/h".into()), ("A".into(), "b=c".into())], ..p });
        assert_eq!(behind, expected);
        assert_eq!(
            detect(&command(&["env", "python3", "-m", "pkg"]), None),
            program(&["python3"], Main::Module("pkg".into()), &[])
        );
        for not in [&["env", "-i", "python3", "s.py"][..], &["env", "A=1"], &["env", "A=1", "node", "s.js"]] {
            assert_eq!(detect(&command(not), None), None, "{not:?}");
        }
    }

    #[test]
    fn other_commands_are_not_python_programs() {
        for argv in [
            &["python3"][..],
            &["python3", "-c", "print(1)"],
            &["python3", "-uc", "print(1)"],
            &["python3", "-"],
            &["python3", "--version"],
            &["python3", "-m"],
            &["python2", "s.py"],
            &["python3.x", "s.py"],
            &["pythonista", "s.py"],
            &["node", "s.py"],
            &["/no/such/program", "s.py"],
            &["no-such-program-on-any-path"],
        ] {
            assert_eq!(detect(&command(argv), None), None, "{argv:?}");
        }
    }

    #[test]
    fn shebangs_are_read_as_the_kernel_and_env_read_them() {
        let read = |head: &str| shebang(head.as_bytes());
        assert_eq!(read("#!/work/.venv/bin/python3\nimport sys\n"), Some(strings(&["/work/.venv/bin/python3"])));
        assert_eq!(read("#! /usr/bin/python3 -u\n"), Some(strings(&["/usr/bin/python3", "-u"])));
        assert_eq!(read("#!/usr/bin/env python3\n"), Some(strings(&["python3"])));
        assert_eq!(read("#!/usr/bin/env -S python3 -u\n"), Some(strings(&["python3", "-u"])));
        assert_eq!(read("#!/usr/bin/env python3 -u\n"), None);
        assert_eq!(
            read("#!/bin/sh\n'''exec' \"/a b/bin/python\" \"$0\" \"$@\"\n' '''\n"),
            Some(strings(&["/a b/bin/python"]))
        );
        assert_eq!(read("#!/bin/sh\necho hi\n"), None);
        assert_eq!(read("import sys\n"), None);
    }

    #[test]
    fn an_executable_whose_shebang_names_python_is_a_python_program() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-python-detect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let file = dir.join(name);
            std::fs::write(&file, text).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
            file.display().to_string()
        };
        let console = write(
            "console-server",
            "#!/work/.venv/bin/python\n# -*- coding: utf-8 -*-\nimport sys\nfrom pkg.server import main\nsys.exit(main())\n",
        );
        let env = write("env-server", "#!/usr/bin/env -S python3 -X dev\nprint(1)\n");
        let shell = write("shell-server", "#!/bin/sh\nexec node server.js\n");
        let path = std::env::join_paths([Path::new("/no/such/folder"), &dir]).unwrap();
        // Found on PATH, or named by a path: the file as the kernel hands it to the interpreter.
        assert_eq!(
            detect(&command(&["console-server", "--flag"]), Some(&path)),
            program(&["/work/.venv/bin/python"], script(&console), &["--flag"])
        );
        assert_eq!(detect(&command(&[&env]), None), program(&["python3", "-X", "dev"], script(&env), &[]));
        assert_eq!(detect(&command(&["shell-server"]), Some(&path)), None);
        assert_eq!(detect(&command(&[&shell]), None), None);
        // Not executable: not found on PATH.
        std::fs::set_permissions(&console, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(detect(&command(&["console-server"]), Some(&path)), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
