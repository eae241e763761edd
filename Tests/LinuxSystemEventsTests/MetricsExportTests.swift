import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing
import TestSupport

/// One sample of Prometheus text: its name, labels and value.
struct PrometheusSample: Equatable {
    var name: String
    var labels: [String: String]
    var value: Double
}

/// A strict reader of the Prometheus text exposition format (0.0.4): every
/// line is a `# HELP`/`# TYPE` comment or a sample; every sample belongs
/// to a family with a TYPE; names and labels are valid; values are numbers.
enum PrometheusText {
    static func parse(_ text: String) throws -> [PrometheusSample] {
        var types: [String: String] = [:]
        var samples: [PrometheusSample] = []
        let nameCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:")
        func validName(_ name: Substring) -> Bool {
            !name.isEmpty && name.unicodeScalars.allSatisfy(nameCharacters.contains) && !(name.first?.isNumber ?? true)
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, validName(parts[2]),
                      ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                    throw TestFailure("bad TYPE line: \(line)")
                }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("#") { continue }
            let nameEnd = line.firstIndex { $0 == "{" || $0 == " " } ?? line.endIndex
            let name = line[..<nameEnd]
            guard validName(name) else { throw TestFailure("bad metric name in: \(line)") }
            var labels: [String: String] = [:]
            var rest = line[nameEnd...]
            if rest.hasPrefix("{") {
                guard let close = rest.firstIndex(of: "}") else { throw TestFailure("unclosed labels: \(line)") }
                for pair in rest[rest.index(after: rest.startIndex)..<close].split(separator: ",") {
                    let halves = pair.split(separator: "=", maxSplits: 1)
                    guard halves.count == 2, validName(halves[0]), halves[1].hasPrefix("\""), halves[1].hasSuffix("\"") else {
                        throw TestFailure("bad label \(pair) in: \(line)")
                    }
                    labels[String(halves[0])] = String(halves[1].dropFirst().dropLast())
                }
                rest = rest[rest.index(after: close)...]
            }
            guard let value = Double(rest.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") else {
                throw TestFailure("bad value in: \(line)")
            }
            let family = ["_bucket", "_sum", "_count"].reduce(String(name)) { current, suffix in
                current.hasSuffix(suffix) && types[String(current.dropLast(suffix.count))] != nil
                    ? String(current.dropLast(suffix.count)) : current
            }
            guard types[family] != nil else { throw TestFailure("sample without a TYPE: \(line)") }
            samples.append(PrometheusSample(name: String(name), labels: labels, value: value))
        }
        return samples
    }
}

/// `--metrics-file` and `ctl metrics`.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct MetricsExportTests {
    @Test func theMetricsFileAndCtlMetricsAreValidPrometheusText() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("mainloop.prom")
        let service = try ServiceProcess(directory: directory,
                                         extraArguments: ["--metrics-file", file, "--metrics-interval", "0.2"])
        #expect(service.firstOKReply(within: 5) != nil)
        for request: JSONValue in [["lifecycle": "home"], ["system": ["orientation": "landscapeLeft"]],
                                   ["system": ["orientation": "portrait"]], ["system": ["orientation": "landscapeRight"]],
                                   ["lifecycle": "foreground"]] {
            #expect(try ControlClient.send(request, to: service.socket)["ok"] == .bool(true))
        }
        let garbler = try RawClient(path: service.socket)
        _ = garbler.sendWithoutBlocking(Array("not json\n".utf8))
        // Waits for the condition, not for a time: the loop-lag probe runs
        // every second and the file is rewritten every 0.2 s.
        var samples: [PrometheusSample] = []
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }
        #expect(eventually(timeout: 15) {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                  let parsed = try? PrometheusText.parse(text) else { return false }
            samples = parsed
            return (value("mainloop_loop_lag_seconds_count") ?? 0) >= 1
                && value("mainloop_socket_errors_total", ["type": "malformed"]) == 1
                && value("mainloop_notifications_total", ["kind": "orientation", "outcome": "deliveredMerged"]) == 1
        }, "the metrics file shows the lag probe, the malformed request and the merge")
        // The Prometheus project's own parser (python3-prometheus-client)
        // reads the file, sample for sample.
        #expect(try Self.samplesParsedByPrometheusClient(file) == samples.count)
        #expect(value("mainloop_notifications_total", ["kind": "orientation", "outcome": "held"]) == 3)
        #expect(value("mainloop_notifications_total", ["kind": "orientation", "outcome": "deliveredMerged"]) == 1)
        #expect(value("mainloop_notifications_total", ["kind": "orientation", "outcome": "folded"]) == 3)
        #expect(value("mainloop_app_state", ["state": "active"]) == 1)
        #expect(value("mainloop_app_state", ["state": "suspended"]) == 0)
        #expect((value("mainloop_loop_dispatched_total", ["priority": "input"]) ?? 0) >= 5, "the socket's callbacks")
        #expect((value("mainloop_loop_lag_seconds_count") ?? 0) >= 1)
        #expect(samples.contains { $0.name == "mainloop_loop_callback_duration_seconds_bucket" && $0.labels["kind"] == "fileDescriptor" })
        #expect(value("mainloop_loop_queue_depth") != nil)
        #expect(value("mainloop_socket_errors_total", ["type": "malformed"]) == 1)
        #expect(value("mainloop_loop_hangs_total") == 0)
        #expect(value("mainloop_loop_rate_limit_pauses_total") == 0)

        let printed = try BuiltTool.run(["ctl", "--socket", service.socket, "metrics"])
        #expect(printed.status == 0)
        let fromCtl = try PrometheusText.parse(printed.output)
        #expect(fromCtl.contains { $0.name == "mainloop_notifications_total" && $0.labels["outcome"] == "deliveredMerged" })
        #expect(service.terminate() == 0)
        #expect(try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8)).count == samples.count,
                "rewritten at exit")
        // After the service stopped: while it runs, a rewrite (every 0.2 s)
        // may be between writing its temporary file and renaming it, which
        // a loaded machine makes long enough to be listed.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp") || $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "written by rename, no temporaries left: \(leftovers)")
    }

    /// Start-up: the metrics are set up after READY=1, in the
    /// loop's first turn. A `metrics` query sent the moment READY=1 arrives
    /// still gets every family: the loop's, the app's, the socket's.
    @Test func aMetricsQueryRightAfterReadyGetsEveryFamily() throws {
        let directory = TemporaryDirectory()
        let listener = try NotifyListener(path: directory.file("notify"))
        let service = try ServiceProcess(directory: directory, environment: ["NOTIFY_SOCKET": listener.path],
                                         waitForSocket: false)
        #expect(listener.until("READY=1", timeout: 10).last?.contains("READY=1") == true)
        let reply = try ControlClient.send(["query": "metrics"], to: service.socket)
        guard case .string(let text)? = reply["text"] else {
            Issue.record("no metrics text: \(reply)")
            return
        }
        let families = Set(try PrometheusText.parse(text).map(\.name))
        for family in ["mainloop_loop_dispatched_total", "mainloop_loop_hangs_total", "mainloop_app_state",
                       "mainloop_notifications_total", "mainloop_socket_connections"] {
            #expect(families.contains(family), "\(family) missing from \(families.sorted())")
        }
        #expect(service.terminate() == 0)
    }

    /// How many samples the Prometheus project's Python client parses from
    /// `file` (it throws on anything that is not the text format).
    static func samplesParsedByPrometheusClient(_ file: String) throws -> Int {
        let script = """
            import sys
            from prometheus_client.parser import text_string_to_metric_families
            text = open(sys.argv[1]).read()
            print(sum(len(family.samples) for family in text_string_to_metric_families(text)))
            """
        let result = try runToCompletion("/usr/bin/python3", ["-c", script, file])
        guard result.status == 0, let count = Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("prometheus_client could not parse \(file) (status \(result.status)): \(result.error)")
        }
        return count
    }
}
