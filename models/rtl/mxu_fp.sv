// The floating-point units of the MXU's processing elements (docs/rtl.md),
// shared by every PE of models/rtl/mxu_array.sv.
//
// Numerics, identical to sim/eval/mxu_tile.cc (the C++ MXU tile):
// - bf16: the bf16 x bf16 product rounded to f32 (exact unless it leaves f32's
//   normal range: subnormal products and overflow to inf round to nearest
//   even), added to the f32 sum with round-to-nearest-even. Subnormal inputs
//   and results are kept (no flush to zero). inf * 0, inf - inf and any NaN
//   operand give NaN, always the quiet NaN 0x7FC00000. x + (-x) is +0;
//   -0 + -0 is -0.
// - int8: the s8 x s8 product added to the s32 sum modulo 2^32.
package mxu_fp;
  localparam logic [31:0] kQuietNan = 32'h7FC00000;

  // sign * mag * 2^scale rounded to f32, nearest even. mag < 2^59; a set bit
  // 0 may stand for a nonzero remainder below it (only ever as a sticky bit).
  function automatic logic [31:0] round_f32(input logic sign, input logic [63:0] mag,
                                            input int scale);
    int p, biased, shift;
    logic [63:0] q, encoded;
    logic guard, sticky;
    if (mag == 64'd0) return {sign, 31'd0};
    p = 0;
    for (int i = 0; i < 60; i++) if (mag[i]) p = i;
    biased = scale + 127 + p;             // the exponent field if the result is normal
    shift = biased >= 1 ? p - 23 : -(scale + 149);  // subnormal: units of 2^-149
    if (shift > 60) shift = 60;           // every bit is below half an ulp
    if (shift <= 0) begin
      q = mag << (-shift);
      guard = 1'b0;
      sticky = 1'b0;
    end else begin
      q = mag >> shift;
      guard = mag[shift - 1];
      sticky = (mag & ((64'd1 << (shift - 1)) - 64'd1)) != 64'd0;
    end
    if (guard && (sticky || q[0])) q = q + 64'd1;
    // A normal q carries the hidden bit, so a rounding carry out of the
    // significand moves into the exponent by itself; a subnormal q that
    // rounds up to 2^23 becomes the smallest normal the same way.
    encoded = biased >= 1 ? ((64'(biased) - 64'd1) << 23) + q : q;
    if (encoded >= 64'h7F800000) encoded = 64'h7F800000;  // overflow: inf
    return {sign, encoded[30:0]};
  endfunction

  function automatic logic [31:0] mul_bf16(input logic [15:0] a, input logic [15:0] b);
    logic a_nan, b_nan, a_inf, b_inf, a_zero, b_zero, sign;
    logic [7:0] ma, mb;
    a_nan = a[14:7] == 8'hFF && a[6:0] != 7'd0;
    b_nan = b[14:7] == 8'hFF && b[6:0] != 7'd0;
    a_inf = a[14:0] == 15'h7F80;
    b_inf = b[14:0] == 15'h7F80;
    a_zero = a[14:0] == 15'd0;
    b_zero = b[14:0] == 15'd0;
    sign = a[15] ^ b[15];
    if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero)) return kQuietNan;
    if (a_inf || b_inf) return {sign, 31'h7F800000};
    ma = {a[14:7] != 8'd0, a[6:0]};
    mb = {b[14:7] != 8'd0, b[6:0]};
    // a = ma * 2^(max(ea, 1) - 134), likewise b; the product is exact in 16 bits.
    return round_f32(sign, 64'(ma) * 64'(mb),
                     (a[14:7] == 8'd0 ? 1 : int'(a[14:7])) + (b[14:7] == 8'd0 ? 1 : int'(b[14:7])) - 268);
  endfunction

  function automatic logic [31:0] add_f32(input logic [31:0] x, input logic [31:0] y);
    logic [31:0] a, b;
    logic x_nan, y_nan, x_inf, y_inf;
    logic [63:0] wa, wb, total;
    int ea, eb, d;
    x_nan = x[30:23] == 8'hFF && x[22:0] != 23'd0;
    y_nan = y[30:23] == 8'hFF && y[22:0] != 23'd0;
    x_inf = x[30:0] == 31'h7F800000;
    y_inf = y[30:0] == 31'h7F800000;
    if (x_nan || y_nan || (x_inf && y_inf && x[31] != y[31])) return kQuietNan;
    if (x_inf) return x;
    if (y_inf) return y;
    if (x[30:0] == 31'd0 && y[30:0] == 31'd0) return {x[31] & y[31], 31'd0};
    // a is the larger magnitude (for finite floats, the larger bit pattern).
    if (y[30:0] > x[30:0]) begin a = y; b = x; end else begin a = x; b = y; end
    ea = a[30:23] == 8'd0 ? 1 : int'(a[30:23]);
    eb = b[30:23] == 8'd0 ? 1 : int'(b[30:23]);
    d = ea - eb;
    // Significands with 27 bits below: b aligned exactly when d <= 27, else
    // it lies strictly below 2^24 of those units and only its nonzeroness
    // (a bit at 0) can reach the rounding (docs/rtl.md).
    wa = 64'({a[30:23] != 8'd0, a[22:0]}) << 27;
    wb = 64'({b[30:23] != 8'd0, b[22:0]}) << 27;
    if (d <= 27) wb = wb >> d;
    else wb = {63'd0, b[30:0] != 31'd0};
    total = a[31] == b[31] ? wa + wb : wa - wb;
    if (total == 64'd0) return 32'd0;  // exact cancellation is +0
    return round_f32(a[31], total, ea - 177);
  endfunction
endpackage
