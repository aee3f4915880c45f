/* The functions the swish extension exports: what cffi binds (plain
 * prototypes; THTensor is declared by cthtorch). */
THTensor *swish_forward(THTensor *input, double beta);
int swish_backward(THTensor *grad_output, THTensor *input, double beta, THTensor *grad_input);
