/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <jansson.h>

#include "api/api.h"

int api_parse_one_attrs(struct api_request *req, json_t *body, struct vfp_settings *s);
