import AppLifecycle
import EngineWire
import MainLoop
import MainLoopJSON
import SystemNotifications

extension Scenario {
    /// Parses a scenario from JSON text.
    /// - Throws: ``ScenarioError`` with the place and problem (the file
    ///   name is added by the caller that knows it).
    public static func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            throw ScenarioError(problem: "invalid JSON at \(error)")
        }
        return try parse(json)
    }

    /// Parses a scenario from a JSON value.
    public static func parse(_ json: JSONValue) throws(ScenarioError) -> Scenario {
        guard let root = json.objectValue else { throw ScenarioError(problem: "a scenario must be a JSON object") }
        try located(nil) { () throws(RequestError) in
            try RequestDecoder.requireKnownKeys(root, ["name", "description", "config", "initial", "steps", "expect"],
                                                what: "scenario")
        }
        var scenario = Scenario(name: root["name"]?.stringValue ?? "(unnamed)")
        if let config = root["config"] { try scenario.parseConfig(config) }
        if let initial = root["initial"] {
            guard let object = initial.objectValue else { throw ScenarioError(problem: "'initial' must be an object") }
            scenario.initial = object
        }
        guard let stepsJSON = root["steps"] else { throw ScenarioError(problem: "'steps' is missing (an array of steps)") }
        guard let steps = stepsJSON.arrayValue else { throw ScenarioError(problem: "'steps' must be an array") }
        var lastAt: Duration?
        for (index, stepJSON) in steps.enumerated() {
            let step = try located(index) { () throws(RequestError) in try parseStep(stepJSON) }
            if let lastAt, step.at < lastAt {
                throw ScenarioError(stepIndex: index, problem: "'at' \(text(step.at)) is before the previous step's \(text(lastAt))")
            }
            if step.sameTurn, step.at != lastAt {
                throw ScenarioError(stepIndex: index, problem: "'sameTurn' needs a previous step at the same 'at'")
            }
            lastAt = step.at
            scenario.steps.append(step)
        }
        if let expect = root["expect"] {
            guard let lines = expect.arrayValue else { throw ScenarioError(problem: "'expect' must be an array") }
            scenario.expect = try lines.enumerated().map { (index, line) throws(ScenarioError) in
                guard let object = line.objectValue else { throw ScenarioError(problem: "expect[\(index)] must be an object") }
                return object
            }
        }
        return scenario
    }

    mutating func parseConfig(_ json: JSONValue) throws(ScenarioError) {
        guard let config = json.objectValue else { throw ScenarioError(problem: "config: must be an object") }
        try Self.located(nil, prefix: "config") { () throws(RequestError) in
            try RequestDecoder.requireKnownKeys(config, ["backgroundTaskLimit", "expirationLead", "didEnterBackgroundLimit",
                                                         "appRefreshTaskLimit", "processingTaskLimit",
                                                         "backgroundModes", "expirationHandlerEndsTask", "customKinds"],
                                                what: "the config")
            func seconds(_ key: String) throws(RequestError) -> Duration? {
                guard let value = config[key] else { return nil }
                return try SpecTime.duration(value, field: key)
            }
            if let limit = try seconds("backgroundTaskLimit") { configuration.backgroundTaskLimit = limit }
            if let lead = try seconds("expirationLead") { configuration.expirationLead = lead }
            if let limit = try seconds("didEnterBackgroundLimit") { configuration.didEnterBackgroundLimit = limit }
            if let limit = try seconds("appRefreshTaskLimit") { configuration.appRefreshTaskLimit = limit }
            if let limit = try seconds("processingTaskLimit") { configuration.processingTaskLimit = limit }
            if let modes = config["backgroundModes"] {
                guard let list = modes.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                    throw RequestError("'backgroundModes' must be an array of strings")
                }
                configuration.backgroundModes = Set(list.compactMap(\.stringValue).map { BackgroundMode($0) })
            }
            if let ends = config["expirationHandlerEndsTask"] {
                guard let flag = ends.boolValue else { throw RequestError("'expirationHandlerEndsTask' must be true or false") }
                expirationHandlerEndsTask = flag
            }
        }
        if let kinds = config["customKinds"] {
            guard let list = kinds.arrayValue else { throw ScenarioError(problem: "config: 'customKinds' must be an array") }
            var names: Set<String> = []
            for (index, json) in list.enumerated() {
                let rule: CoalescingRule
                do throws(CustomKindError) {
                    rule = try CoalescingRule(customKind: json)
                } catch {
                    throw ScenarioError(problem: "config: customKinds[\(index)]: \(error)")
                }
                guard names.insert(rule.kind.name).inserted else {
                    throw ScenarioError(problem: "config: customKinds[\(index)]: a kind named '\(rule.kind.name)' is already declared")
                }
                customKinds.append(rule)
            }
        }
    }

    private static func parseStep(_ json: JSONValue) throws(RequestError) -> Step {
        guard var object = json.objectValue else { throw RequestError("a step must be an object") }
        let at = try SpecTime.duration(object["at"], field: "at")
        object["at"] = nil
        var sameTurn = false
        if let flag = object["sameTurn"] {
            guard let value = flag.boolValue else { throw RequestError("'sameTurn' must be true or false") }
            sameTurn = value
            object["sameTurn"] = nil
        }
        return Step(at: at, request: try RequestDecoder.decode(object, context: .scenarioStep), sameTurn: sameTurn)
    }

    /// Runs `body`, placing its error at `steps[index]` (or under `prefix`).
    static func located<T>(_ index: Int?, prefix: String? = nil,
                           _ body: () throws(RequestError) -> T) throws(ScenarioError) -> T {
        do {
            return try body()
        } catch {
            throw ScenarioError(stepIndex: index, problem: prefix.map { "\($0): \(error.problem)" } ?? error.problem)
        }
    }

    static func text(_ duration: Duration) -> String { DecimalSeconds.text(nanoseconds: duration.nanosecondsClamped) }
}
