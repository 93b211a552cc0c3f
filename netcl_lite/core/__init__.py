"""The layer every op stands on: the device (``device.py``), tensors
(``tensor.py``), building and launching kernels (``program.py``) with their
arguments checked (``signature.py``), input validation (``validate.py``) and
arithmetic on bare tensors that records no gradient (``tensor_ops.py``)."""
