//! The `find` and `stdio-find` sections: the time to first finding of every planted bug, in-process, under
//! libFuzzer and over stdio.

use super::*;

/// Seconds until the campaign engine's conversations first break the planted bug's rule (`None` past the cap).
fn engine_time_to_find(mutant: Mutant, seed: u64) -> Option<f64> {
    let started = Instant::now();
    (0..200_000u64).find(|&i| {
        let transcript = run_in_process(&Planted(mutant), &conversation(seed, i));
        check(&transcript, &mutant.policy()).iter().any(|f| f.rule == mutant.expected_rule())
    })?;
    Some(started.elapsed().as_secs_f64())
}

/// Seconds until a libFuzzer binary pinned to the planted bug crashes from an empty corpus (`None` past `cap`).
fn libfuzzer_time_to_find(binary: &Path, mutant: Mutant, seed: u64, cap: u64) -> Option<f64> {
    let (corpus, artifacts) = (scratch("find-corpus"), scratch("find-artifacts"));
    let started = Instant::now();
    let output = Command::new(binary)
        .env("WIREFUZZ_MUTANT", mutant.name())
        .arg(&corpus)
        .arg(format!("-seed={seed}"))
        .arg(format!("-max_total_time={cap}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .output()
        .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let broke = stderr.lines().find_map(|line| line.strip_prefix("mcp-wirefuzz: broke "));
    let found = broke.is_some_and(|rules| rules.split(", ").any(|rule| rule == mutant.expected_rule()));
    found.then_some(elapsed)
}

/// The median time to find over seeds, or `None` when no more than half of the seeds found the bug.
fn median_found(seconds: &[Option<f64>]) -> Option<f64> {
    let found = seconds.iter().flatten().count();
    (found * 2 > seconds.len()).then(|| median(seconds.iter().map(|s| s.unwrap_or(f64::INFINITY)).collect()))
}

fn show(seconds: &[Option<f64>], cap: f64) -> String {
    let found = seconds.iter().flatten().count();
    match median_found(seconds) {
        None => format!("> {cap:.0} s ({found}/{} found)", seconds.len()),
        Some(m) if m < 1.0 => format!("{:.1} ms", m * 1000.0),
        Some(m) => format!("{m:.1} s"),
    }
}

/// One planted bug's times to find, per finder: the campaign engine, cargo-fuzz `mutant`, `mutant_bytes`.
struct FindRow {
    mutant: Mutant,
    times: [Vec<Option<f64>>; 3],
}

pub(crate) fn find() {
    const CAP: u64 = 10;
    println!("## time to first finding per planted bug (median of 3 seeds; libFuzzer runs capped at {CAP} s)");
    let binaries = fuzz_binaries();
    println!("| mutant | rule | `fuzz` engine | cargo fuzz `mutant` | cargo fuzz `mutant_bytes` (no structure) |");
    println!("|---|---|---|---|---|");
    let seeds = [1u64, 2, 3];
    let mut rows = Vec::new();
    for mutant in Mutant::ALL {
        let engine: Vec<Option<f64>> = seeds.iter().map(|&s| engine_time_to_find(mutant, s)).collect();
        let libfuzzer = |target: &str| match &binaries {
            Some(dir) => seeds.iter().map(|&s| libfuzzer_time_to_find(&dir.join(target), mutant, s, CAP)).collect(),
            None => Vec::new(),
        };
        let (structured, bytes) = (libfuzzer("mutant"), libfuzzer("mutant_bytes"));
        let cell = |times: &Vec<Option<f64>>| if times.is_empty() { "skipped".into() } else { show(times, CAP as f64) };
        println!(
            "| {mutant} | {} | {} | {} | {} |",
            mutant.expected_rule(),
            show(&engine, 200_000.0),
            cell(&structured),
            cell(&bytes)
        );
        rows.push(FindRow { mutant, times: [engine, structured, bytes] });
    }
    let plot = root().join("docs/src/measured/time-to-find.svg");
    std::fs::write(&plot, time_to_find_svg(&rows, CAP as f64)).unwrap();
    println!("   plot: {}", plot.display());
}

/// A dot plot of [`find`]'s medians: one row per planted bug, time on a log scale from 0.1 ms to the cap, and a
/// bug a finder did not find drawn in the "not found" column.
fn time_to_find_svg(rows: &[FindRow], cap: f64) -> String {
    const FINDERS: [(&str, &str); 3] =
        [("fuzz engine", "#1b7837"), ("cargo fuzz mutant", "#2166ac"), ("cargo fuzz mutant_bytes", "#b2182b")];
    let (left, width, top, row_height) = (230.0, 560.0, 40.0, 18.0);
    let (low, high) = (1e-4f64.log10(), cap.log10());
    let x = |seconds: f64| left + (seconds.log10().clamp(low, high) - low) / (high - low) * width;
    // Bugs not found sit in a column of their own, each finder a little apart so no dot hides another.
    let missing = left + width + 70.0;
    let bottom = top + row_height * rows.len() as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" \
         font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{left}\" y=\"18\" \
         font-size=\"13\">Time to first finding per planted bug (median of 3 seeds; libFuzzer capped at {cap} s)\
         </text>\n",
        missing + 60.0,
        bottom + 50.0
    );
    let ticks = [(1e-4, "0.1 ms"), (1e-3, "1 ms"), (1e-2, "10 ms"), (0.1, "0.1 s"), (1.0, "1 s"), (cap, "10 s")];
    for (seconds, label) in ticks.into_iter().chain([(f64::NAN, "not found")]) {
        let at = if seconds.is_nan() { missing } else { x(seconds) };
        svg += &format!(
            "<line x1=\"{at:.1}\" y1=\"{top}\" x2=\"{at:.1}\" y2=\"{bottom}\" stroke=\"#ddd\"/>\n<text x=\"{at:.1}\" \
             y=\"{}\" text-anchor=\"middle\">{label}</text>\n",
            bottom + 14.0
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let y = top + row_height * (i as f64 + 0.5);
        let name = row.mutant;
        svg += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{name}</text>\n", left - 8.0, y + 4.0);
        for (finder, ((_, color), times)) in FINDERS.iter().zip(&row.times).enumerate() {
            if times.is_empty() {
                continue;
            }
            let at = median_found(times).map_or(missing + 10.0 * (finder as f64 - 1.0), x);
            svg += &format!("<circle cx=\"{at:.1}\" cy=\"{y}\" r=\"4.5\" fill=\"{color}\" fill-opacity=\"0.8\"/>\n");
        }
    }
    for (i, (name, color)) in FINDERS.iter().enumerate() {
        let at = left + 190.0 * i as f64;
        svg += &format!(
            "<circle cx=\"{at}\" cy=\"{}\" r=\"4.5\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\">{name}</text>\n",
            bottom + 34.0,
            at + 8.0,
            bottom + 38.0
        );
    }
    svg + "</svg>\n"
}

/// Seconds from the start of what a user runs, `mcp-wirefuzz fuzz --seed SEED --time CAP -- mcp-wirefuzz serve
/// --mutant NAME` (the CLI: model probe, surface, calibration, the sweep, then generated conversations with sentinel
/// barriers, minimization beside), until it reports the planted bug's rule (`None` when the run ends at `cap`
/// without it). At that report the run is ended with SIGTERM, on which it ends its servers.
fn stdio_time_to_find(exe: &str, mutant: Mutant, seed: u64, cap: f64) -> Option<f64> {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let out = scratch("stdio-find");
    let mut fuzz = Command::new(exe);
    fuzz.args(["fuzz", "--seed", &seed.to_string(), "--time", &cap.to_string(), "--out"]).arg(&out);
    if let Some(profile) = mutant.profile() {
        fuzz.args(["--profile", profile]);
    }
    fuzz.args(["--", exe, "serve", "--mutant", mutant.name()]);
    let started = Instant::now();
    let mut child = fuzz.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    // A finding's first line: `ERROR RULE [trigger] (conversation N)`.
    let reports = |line: &String| {
        let mut words = line.split(' ');
        words.next().is_some_and(|level| matches!(level, "ERROR" | "WARNING"))
            && words.next() == Some(mutant.expected_rule())
    };
    let found = BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok).any(|l| reports(&l));
    let elapsed = started.elapsed().as_secs_f64();
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&out);
    found.then_some(elapsed)
}

pub(crate) fn stdio_find(exe: &str) {
    const CAP: f64 = 20.0;
    const TARGET: f64 = 2.0;
    println!(
        "## time to first finding over stdio: `fuzz --seed S --time {CAP} -- mcp-wirefuzz serve --mutant NAME`, from its start (median of seeds 1-3)"
    );
    println!("| mutant | rule | seed 1 | seed 2 | seed 3 | median | over {TARGET} s |");
    println!("|---|---|---|---|---|---|---|");
    let cell = |time: &Option<f64>| time.map_or(format!("> {CAP:.0} s"), |t| format!("{t:.2} s"));
    let mut medians = Vec::new();
    for mutant in Mutant::ALL {
        let times: Vec<Option<f64>> = [1u64, 2, 3].iter().map(|&s| stdio_time_to_find(exe, mutant, s, CAP)).collect();
        let median = median_found(&times).unwrap_or(f64::INFINITY);
        medians.push(median);
        println!(
            "| {mutant} | {} | {} | {} | {} | {} | {} |",
            mutant.expected_rule(),
            cell(&times[0]),
            cell(&times[1]),
            cell(&times[2]),
            show(&times, CAP),
            if median > TARGET { "**over**" } else { "" }
        );
    }
    let over = medians.iter().filter(|&&m| m > TARGET).count();
    println!("   {over} of {} planted bugs over {TARGET} s; median over all: {:.2} s", medians.len(), median(medians));
}
