// A ROWS x COLS weight-stationary systolic MXU tile (docs/rtl.md).
//
// One streamed row per cycle enters at `in_*`: ROWS activations (element k
// meets weight row k), COLS seeds (the partial sums the columns start from)
// and the row's tags. The input register and a skew bank delay element k by
// k cycles and seed c by c cycles, so the row crosses the array as a diagonal
// wavefront; partial sums flow down each column in increasing k; a de-skew
// bank delays column c by COLS-1-c cycles so that the row's COLS sums leave
// together through the output register, in input order, ROWS + COLS cycles
// after the row entered.
//
// Processing element (k, c) holds weight W[k][c] in active_w (and, double-
// buffered, the next tile's in next_w). Each cycle it takes the activation
// from the left and the partial sum from above and passes on, registered, the
// activation to the right and sum + activation x weight below (mxu_fp.sv's
// units). With `skip` (MXU passes other than (0, 0)) a bf16 product with a
// zero factor is skipped: the sum passes unchanged.
//
// Weights enter at `wt_*`, one group of 8 weight rows per cycle (one vreg of
// 8 sublanes) tagged with its group; the group is skewed by column like the
// seeds and travels down, and each PE row latches its own row of its group. With double_buffer set they land in next_w, and the first row
// of the next tile (in_commit) switches each PE over as it passes; without,
// they overwrite active_w.
//
// The PEs are registers indexed by (k, c) and updated in loops, rather than
// ROWS x COLS module instances, so that Verilator emits one loop body instead
// of per-instance code (the 128x128 array would otherwise be gigabytes of
// C++). Each always_ff visits k and c in decreasing order with blocking
// assignments: a register is read by its right and lower neighbours before it
// is overwritten, which gives the same next state as nonblocking assignments.
module mxu_array
  import mxu_fp::*;
#(parameter int ROWS = 8, parameter int COLS = 8,
  localparam int WR = 8,  // weight rows per load cycle; ROWS must be a multiple
  localparam int GROUPS = ROWS / WR,
  localparam int ROW_BITS = GROUPS > 1 ? $clog2(GROUPS) : 1) (
  input  logic                    clk,
  input  logic                    int8_mode,
  input  logic                    double_buffer,
  input  logic                    in_valid,
  input  logic                    in_commit,
  input  logic                    in_skip,
  input  logic [ROWS-1:0][15:0]   in_act,
  input  logic [COLS-1:0][31:0]   in_seed,
  input  logic                    wt_valid,
  input  logic [ROW_BITS-1:0]     wt_row,   // the group: rows WR*wt_row ..
  input  logic [WR-1:0][COLS-1:0][15:0] wt_data,
  output logic                    out_valid,
  output logic [COLS-1:0][31:0]   out_sum
);
  // Input register.
  logic                  r_valid, r_commit, r_skip, r_wt_valid;
  logic [ROWS-1:0][15:0] r_act;
  logic [COLS-1:0][31:0] r_seed;
  logic [ROW_BITS-1:0]   r_wt_row;
  logic [WR-1:0][COLS-1:0][15:0] r_wt;

  // Skew banks: stage i of row k (column c) holds the input i+1 cycles old;
  // row k leaves from stage k-1 (row 0 straight from the input register).
  logic [15:0]         skew_act [ROWS][ROWS];
  logic                skew_valid [ROWS][ROWS], skew_commit [ROWS][ROWS], skew_skip [ROWS][ROWS];
  logic [31:0]         skew_seed [COLS][COLS];
  logic                skew_wt_valid [COLS][COLS];
  logic [ROW_BITS-1:0] skew_wt_row [COLS][COLS];
  logic [WR-1:0][15:0] skew_wt [COLS][COLS];

  // PE registers: what PE (k, c) passes right (act_*) and down (sum_*, wt_*).
  logic [15:0]         act_q [ROWS][COLS];
  logic                act_valid_q [ROWS][COLS], act_commit_q [ROWS][COLS], act_skip_q [ROWS][COLS];
  logic [31:0]         sum_q [ROWS][COLS];
  logic                sum_valid_q [ROWS][COLS];
  logic                wt_valid_q [ROWS][COLS];
  logic [ROW_BITS-1:0] wt_row_q [ROWS][COLS];
  logic [WR-1:0][15:0] wt_q [ROWS][COLS];
  logic [15:0]         active_w [ROWS][COLS], next_w [ROWS][COLS];

  // De-skew bank: stage i of column c holds the bottom sum i+1 cycles old;
  // column c leaves from stage COLS-2-c (column COLS-1 straight from the PE).
  logic [31:0]           deskew_sum [COLS][COLS];
  logic                  deskew_valid [COLS];
  logic [COLS-1:0][31:0] deskewed;

  always_comb begin
    for (int c = 0; c < COLS; c++) begin
      deskewed[c] = c == COLS - 1 ? sum_q[ROWS-1][c] : deskew_sum[c][COLS-2-c];
    end
  end

  // verilator lint_off BLKSEQ
  always_ff @(posedge clk) begin
    logic [15:0]         a_in, weight;
    logic                v_in, commit_in, skip_in, wv_in;
    logic [31:0]         s_in, product;
    logic [ROW_BITS-1:0] wr_in;
    logic [WR-1:0][15:0] w_in;
    // Output register, then the de-skew bank (its valid bit follows column
    // COLS-1, which has no delay).
    out_valid = sum_valid_q[ROWS-1][COLS-1];
    out_sum = deskewed;
    for (int c = COLS - 1; c >= 0; c--) begin
      for (int i = COLS - 1; i >= 1; i--) deskew_sum[c][i] = deskew_sum[c][i-1];
      deskew_sum[c][0] = sum_q[ROWS-1][c];
    end
    // PEs, bottom-right first.
    for (int k = ROWS - 1; k >= 0; k--) begin
      for (int c = COLS - 1; c >= 0; c--) begin
        if (c == 0) begin
          a_in = k == 0 ? r_act[0] : skew_act[k][k-1];
          v_in = k == 0 ? r_valid : skew_valid[k][k-1];
          commit_in = k == 0 ? r_commit : skew_commit[k][k-1];
          skip_in = k == 0 ? r_skip : skew_skip[k][k-1];
        end else begin
          a_in = act_q[k][c-1];
          v_in = act_valid_q[k][c-1];
          commit_in = act_commit_q[k][c-1];
          skip_in = act_skip_q[k][c-1];
        end
        if (k == 0) begin
          s_in = c == 0 ? r_seed[0] : skew_seed[c][c-1];
          wv_in = c == 0 ? r_wt_valid : skew_wt_valid[c][c-1];
          wr_in = c == 0 ? r_wt_row : skew_wt_row[c][c-1];
          for (int r = 0; r < WR; r++) w_in[r] = c == 0 ? r_wt[r][0] : skew_wt[c][c-1][r];
        end else begin
          s_in = sum_q[k-1][c];
          wv_in = wt_valid_q[k-1][c];
          wr_in = wt_row_q[k-1][c];
          w_in = wt_q[k-1][c];
        end
        weight = (double_buffer && commit_in) ? next_w[k][c] : active_w[k][c];
        if (v_in) begin
          if (int8_mode) begin
            product = 32'(signed'(a_in[7:0])) * 32'(signed'(weight[7:0]));
            sum_q[k][c] = s_in + product;
          end else if (skip_in && (a_in[14:0] == 15'd0 || weight[14:0] == 15'd0)) begin
            sum_q[k][c] = s_in;
          end else begin
            sum_q[k][c] = add_f32(s_in, mul_bf16(a_in, weight));
          end
          if (double_buffer && commit_in) active_w[k][c] = next_w[k][c];
        end
        sum_valid_q[k][c] = v_in;
        act_q[k][c] = a_in;
        act_valid_q[k][c] = v_in;
        act_commit_q[k][c] = v_in && commit_in;
        act_skip_q[k][c] = skip_in;
        if (wv_in && wr_in == ROW_BITS'(k / WR)) begin
          if (double_buffer) next_w[k][c] = w_in[k % WR];
          else active_w[k][c] = w_in[k % WR];
        end
        wt_valid_q[k][c] = wv_in;
        wt_row_q[k][c] = wr_in;
        wt_q[k][c] = w_in;
      end
    end
    // Skew banks, oldest stage first, then the input register.
    for (int k = ROWS - 1; k >= 0; k--) begin
      for (int i = ROWS - 1; i >= 1; i--) begin
        skew_act[k][i] = skew_act[k][i-1];
        skew_valid[k][i] = skew_valid[k][i-1];
        skew_commit[k][i] = skew_commit[k][i-1];
        skew_skip[k][i] = skew_skip[k][i-1];
      end
      skew_act[k][0] = r_act[k];
      skew_valid[k][0] = r_valid;
      skew_commit[k][0] = r_commit;
      skew_skip[k][0] = r_skip;
    end
    for (int c = COLS - 1; c >= 0; c--) begin
      for (int i = COLS - 1; i >= 1; i--) begin
        skew_seed[c][i] = skew_seed[c][i-1];
        skew_wt_valid[c][i] = skew_wt_valid[c][i-1];
        skew_wt_row[c][i] = skew_wt_row[c][i-1];
        skew_wt[c][i] = skew_wt[c][i-1];
      end
      skew_seed[c][0] = r_seed[c];
      skew_wt_valid[c][0] = r_wt_valid;
      skew_wt_row[c][0] = r_wt_row;
      for (int r = 0; r < WR; r++) skew_wt[c][0][r] = r_wt[r][c];
    end
    r_valid = in_valid;
    r_commit = in_commit;
    r_skip = in_skip;
    r_act = in_act;
    r_seed = in_seed;
    r_wt_valid = wt_valid;
    r_wt_row = wt_row;
    r_wt = wt_data;
  end
  // verilator lint_on BLKSEQ
endmodule
