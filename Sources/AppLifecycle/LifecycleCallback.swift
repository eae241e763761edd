/// The delegate callbacks of BEHAVIOUR.md §7, in the names the replay prints.
public enum LifecycleCallback: String, Sendable, CaseIterable, CustomStringConvertible {
    case willFinishLaunching, didFinishLaunching, didBecomeActive, willResignActive,
         didEnterBackground, willEnterForeground, willTerminate

    public var description: String { rawValue }
}
