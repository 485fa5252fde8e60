// Placeholder: parsing and formatting are being written (see issue 2); this keeps the API compiling.
extension Decimal128: CustomStringConvertible, LosslessStringConvertible {
  /// Parses a decimal string per the Decimal128 specification; `nil` when it is not one.
  public init?(_ description: String) {
    return nil
  }

  /// The string form of the value per the Decimal128 specification.
  public var description: String { "0" }
}
