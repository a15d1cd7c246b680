@testable import FerryURLSession
import Testing

/// Apple's rules for resume, suspend and cancel, without any I/O.
@Suite struct TaskLifecycleTests {
    @Test func aTaskStartsSuspendedAndItsFirstResumeStartsIt() {
        var task = TaskLifecycle()
        #expect(task.state == .suspended)
        let step1 = task.resume()
        #expect(step1 == .start)
        let step2 = task.resume()
        #expect(step2 == .none, "resuming a running task does nothing")
        let step3 = task.suspend()
        #expect(step3 == .pause)
        let step4 = task.suspend()
        #expect(step4 == .none)
        let step5 = task.resume()
        #expect(step5 == .unpause)
        let step6 = task.cancel()
        #expect(step6 == .stop(started: true))
        #expect(task.state == .canceling)
        let step7 = task.cancel()
        #expect(step7 == .none, "cancelled once")
        let step8 = task.resume()
        #expect(step8 == .none)
        let step9 = task.finish()
        #expect(step9)
        let step10 = task.finish()
        #expect(!step10, "the end is reported once")
        #expect(task.state == .completed)
    }

    @Test func aTaskCancelledBeforeItsFirstResumeHasNothingToStop() {
        var task = TaskLifecycle()
        let step11 = task.cancel()
        #expect(step11 == .stop(started: false))
        let step12 = task.resume()
        #expect(step12 == .none)
    }
}
