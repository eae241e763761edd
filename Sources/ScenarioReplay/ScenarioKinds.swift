import FileSupport
import MainLoopJSON
import SystemNotifications

extension ScenarioFile {
    /// The largest kinds file read (1 MiB: thousands of kinds).
    public static let maxKindsFileBytes = 1 << 20

    /// Reads a kinds file (`mainloop replay --kinds FILE`): a JSON array of
    /// custom kind entries, the form of ``/SystemNotifications/CoalescingRule/customKindJSON()``
    /// and of a scenario's `config.customKinds`.
    /// - Throws: ``ScenarioError`` naming the file, and the entry and field
    ///   that is wrong; two entries of one name are an error.
    public static func readKinds(_ path: String) throws(ScenarioError) -> [CoalescingRule] {
        let json = try readJSON(path, maxBytes: maxKindsFileBytes)
        guard let entries = json.arrayValue else {
            throw ScenarioError(file: path, problem: "a kinds file is a JSON array of custom kind entries")
        }
        var rules: [CoalescingRule] = []
        for (index, entry) in entries.enumerated() {
            let rule: CoalescingRule
            do throws(CustomKindError) {
                rule = try CoalescingRule(customKind: entry)
            } catch {
                throw ScenarioError(file: path, problem: "[\(index)]: \(error)")
            }
            guard !rules.contains(where: { $0.kind.name == rule.kind.name }) else {
                throw ScenarioError(file: path, problem: "[\(index)]: a kind named '\(rule.kind.name)' is already declared")
            }
            rules.append(rule)
        }
        return rules
    }
}

extension Scenario {
    /// The scenario with `kinds` declared before its own `config.customKinds`.
    /// A kind the scenario declares too must be declared the same way: the
    /// scenario then tests the service's own rule, not a copy that drifted.
    /// - Throws: ``ScenarioError`` naming the kind whose declarations differ.
    public func declaring(_ kinds: [CoalescingRule]) throws(ScenarioError) -> Scenario {
        var declared = self
        declared.customKinds = kinds
        for (index, own) in customKinds.enumerated() {
            if let given = kinds.first(where: { $0.kind.name == own.kind.name }) {
                guard given == own else {
                    throw ScenarioError(problem: "config: customKinds[\(index)]: '\(own.kind.name)' is declared "
                                        + "differently from the kinds file's rule")
                }
            } else {
                declared.customKinds.append(own)
            }
        }
        return declared
    }
}

extension ScenarioFile {
    /// The largest configuration file read (1 MiB).
    public static let maxConfigFileBytes = 1 << 20

    /// Reads a file holding a scenario's `config` object (BEHAVIOUR.md §7),
    /// for a service that runs with the configuration a scenario states
    /// (`mainloop run --config FILE`): the result's ``Scenario/configuration``,
    /// ``Scenario/expirationHandlerEndsTask`` and ``Scenario/customKinds``.
    /// - Throws: ``ScenarioError`` naming the file and the key.
    public static func readConfig(_ path: String) throws(ScenarioError) -> Scenario {
        let json = try readJSON(path, maxBytes: maxConfigFileBytes)
        var scenario = Scenario(name: path)
        do throws(ScenarioError) {
            try scenario.parseConfig(json)
        } catch {
            var located = error
            located.file = path
            throw located
        }
        return scenario
    }

    /// One JSON value read from the file `path` (at most `maxBytes`).
    private static func readJSON(_ path: String, maxBytes: Int) throws(ScenarioError) -> JSONValue {
        let text: String
        do {
            text = try FileContents.text(path, maxBytes: maxBytes)
        } catch {
            throw ScenarioError(file: path, problem: error.description)
        }
        do {
            return try JSONValue.parse(text)
        } catch {
            throw ScenarioError(file: path, problem: "invalid JSON: \(error)")
        }
    }
}
