/// An engine component that follows the lifecycle (the system notification
/// center is one): it learns every state change and is told when to deliver
/// what it held and when the app died. Not app code: called in every state.
public protocol LifecycleParticipant: AnyObject {
    /// The app entered `state` (called for every `state` step).
    func application(_ application: Application, didEnter state: AppState)
    /// The resume point of SPEC §1 (`foreground`/`wake` from suspended).
    func applicationShouldDeliverHeldEvents(_ application: Application)
    /// The app was killed or terminated: discard anything held for it.
    func applicationDidEnd(_ application: Application)
}

/// A non-owning reference to a participant. Not `weak`: a weak reference
/// gives the participant a refcount side table, which sends every later
/// retain of it down the slow path (measured on the center's per-event
/// handler). A participant removes itself (``Application/removeParticipant(_:)``)
/// before it is released.
struct ParticipantReference {
    unowned(unsafe) let participant: any LifecycleParticipant
}
