import Foundation
import ReefSwift
import ReefTestSupport
import Testing

@Suite struct InvalidatedObjectTests {
  private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func settingAPropertyOfAnInvalidatedObjectStopsAsInvalidatedFirst() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, cellar) = try openCellar()
        reef.invalidate()
        cellar.name = "south"
      }
    }
    #expect(stderr(result).contains("Object has been deleted or invalidated"), "\(stderr(result))")
  }

  @Test func changingAListOfAnInvalidatedObjectStopsAsInvalidatedFirst() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, cellar) = try openCellar()
        let bottles = cellar.bottles
        reef.invalidate()
        bottles.removeAll()
      }
    }
    #expect(stderr(result).contains("Object has been deleted or invalidated"), "\(stderr(result))")
  }

  @Test func settingAPropertyOutsideAWriteStillStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (_, cellar) = try openCellar()
        cellar.name = "south"
      }
    }
    #expect(stderr(result).contains("outside of a write transaction"), "\(stderr(result))")
  }
}
