/* Keeps a client's shared-memory object from killing the server. A client
 * may shrink or remove the object behind a region while the server has it
 * mapped; touching a page past the object's new end then raises SIGBUS.
 * The guard's handler recognises addresses inside guarded mappings, puts
 * an anonymous zero page in place of the missing one and counts a fault
 * for the mapping, so the touching thread (a backend, a frontend) goes on
 * and the request that used the region fails afterwards, on the count.
 * Faults elsewhere go to the handler that was there before. */
#ifndef NEREID_SERVER_SHM_SHM_GUARD_H
#define NEREID_SERVER_SHM_SHM_GUARD_H

#include <stddef.h>
#include <stdint.h>

/** Installs the SIGBUS handler, once per process. Any thread. */
void srv_shm_guard_install(void);

/** Guards [addr, addr + len): returns its slot (> 0), or 0 when every
 *  slot is taken (SRV_SHM_REGIONS_MAX). Any thread. */
uint32_t srv_shm_guard_add(void *addr, size_t len);

/** Stops guarding a slot, before its mapping goes away. */
void srv_shm_guard_remove(uint32_t slot);

/** Faults counted in a slot since it was added. */
uint32_t srv_shm_guard_faults(uint32_t slot);

#endif
